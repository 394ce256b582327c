/**
 * What V8 itself spent in a window of deliveries, beside running the receiver: compiling JavaScript and collecting
 * garbage. Both come in lumps. Between 6,000 and 10,000 deliveries on Node 26, TurboFan still compiled three of
 * ours' functions (12.2k instructions a delivery) and part of a major GC fell in the window (13.0k), while Stripe's
 * window held 3.4k and 3.4k: the rest was 128.8k against 122.3k (bench README, Instructions). Issue 28 asks for the
 * steady state after the JIT compiling; these figures say how much of a window is still that, so that a verdict the
 * lumps decide is `unsure`.
 */

/** A window's instructions spent by V8 compiling and collecting garbage (inclusive of everything they call). */
export interface EngineCosts {
  compiling: number;
  collecting: number;
}

// Entry points that do not call one another (checked with `callgrind_annotate --tree=caller` on Node 22, 24 and 26),
// so that their inclusive costs add up without counting an instruction twice: bytecode for a function run the first
// time (parse included), Sparkplug, Maglev and TurboFan (synchronous under --single-threaded: Maglev's job runs
// inside CompileOptimized); a scavenge or a mark-compact (its finalisation included), and the incremental marking
// steps, which Node 22 and 24 take in a task (whose finalisation calls CollectGarbage, so the task is not a root) and
// Node 26 on allocation. And the platform's worker threads: --single-threaded still lets a scavenge hand part of its
// work to them as a job (`ScavengerJobTask`, the only job they ran, `--tree=calling`), which is not under the main
// thread's CollectGarbage (the main thread runs its own share through `DefaultJobState::Join`). Without this root the
// column moved with how the OS scheduled valgrind's threads, so with the machine's load (bench README, Instructions).
const COMPILING = [
  /^Compiler::Compile\(Isolate\*, (Direct)?Handle<SharedFunctionInfo>/,
  /^Compiler::CompileSharedWithBaseline\(/,
  /^Compiler::CompileOptimized(OSR)?\(/,
];
const COLLECTING = [
  /^Heap::CollectGarbage\((?!.*\)::)/,
  /^IncrementalMarking::Step\(/,
  /^v8::platform::DefaultJobWorker::Run\(/,
];

/** `???:v8::internal::Heap::CollectGarbage(v8::internal::…)` as `Heap::CollectGarbage(…)`. */
function bareName(name: string): string {
  return name.replace(/^[^:]*:(?!:)/, '').replaceAll('v8::internal::', '');
}

/**
 * The compiling and collecting in an inclusive profile (`annotate(file, { inclusive: true })`).
 *
 * @example
 * ```ts
 * engineCosts(new Map([['???:v8::internal::Heap::CollectGarbage(…)', 900]])) // { compiling: 0, collecting: 900 }
 * ```
 */
export function engineCosts(inclusive: ReadonlyMap<string, number>): EngineCosts {
  const costs: EngineCosts = { compiling: 0, collecting: 0 };
  for (const [name, instructions] of inclusive) {
    const bare = bareName(name);
    if (COMPILING.some((root) => root.test(bare))) costs.compiling += instructions;
    else if (COLLECTING.some((root) => root.test(bare))) costs.collecting += instructions;
  }
  return costs;
}

/**
 * Per delivery, what V8 spent compiling and collecting between a shorter and a longer run.
 *
 * @example
 * ```ts
 * windowEngineCosts(engineCosts(long), engineCosts(short), 4_000) // { compiling: 12_453, collecting: 13_109 }
 * ```
 */
export function windowEngineCosts(longer: EngineCosts, shorter: EngineCosts, deliveries: number): EngineCosts {
  return {
    compiling: (longer.compiling - shorter.compiling) / deliveries,
    collecting: (longer.collecting - shorter.collecting) / deliveries,
  };
}
