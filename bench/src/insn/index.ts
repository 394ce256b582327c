/**
 * Section "insn": instructions, not seconds (issue 28). Every figure is counted by valgrind's callgrind in a process
 * of its own, so the load of a shared machine does not move it:
 * - cold: importing a receiver's libraries, and process start to its first answer, beyond node itself;
 * - early: instructions per delivery over the first deliveries of a fresh process;
 * - steady: instructions per delivery after a long warm-up, as the slope between two runs of different length;
 * - the Workers bundle of a minimal fetch handler, by package; where ours spends each steady delivery.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { createBenchSigner, signPool } from '../fixtures.js';
import { bytes, int, table, verdict } from '../report.js';
import type { BenchOptions, Section } from '../section.js';
import { buildProgram, PROGRAM_DIR } from './build.js';
import { workerBundle } from './bundle.js';
import { setupOf, signOrderedPool, writeFixture } from './fixture.js';
import { annotate, callgrind, ensureValgrind, NODE_FLAGS, topPerDelivery, type CallgrindRun } from './callgrind.js';
import { engineCosts, windowEngineCosts } from './engine-costs.js';
import { defaultNodeLines, resolveNodeLines, type NodeLine } from './node-lines.js';
import type { InsnKind, RunSpec, SubjectName } from './protocol.js';
import { fineRatio, insnVerdicts, steadyLessEngine, telemetryVerdicts, type Measured } from './verdicts.js';

/**
 * The receivers and kinds measured, in table order. Stripe verifies an HMAC only. `repeat` measures ours again, as
 * the telemetry verdict's noise: two runs of the same program in the same run, the spread a ratio cannot beat.
 */
const CASES: { subject: SubjectName; kind: InsnKind; label: string; repeat?: true }[] = [
  { subject: 'hand', kind: 'hmac', label: 'hand-written' },
  { subject: 'hand-zod', kind: 'hmac', label: 'hand-written + the spec schemas through zod' },
  { subject: 'stripe', kind: 'hmac', label: 'Stripe constructEvent + Map' },
  { subject: 'ours', kind: 'hmac', label: 'ours, receive()' },
  { subject: 'ours-fetch', kind: 'hmac', label: 'ours, fetch handler' },
  { subject: 'hand-fastify', kind: 'hmac', label: 'hand-written in Fastify, inject()' },
  { subject: 'ours-fastify', kind: 'hmac', label: 'ours, @kyb-webhooks/fastify, inject()' },
  { subject: 'hand', kind: 'attested', label: 'hand-written + spec 5.5 by hand' },
  { subject: 'hand-zod', kind: 'attested', label: 'hand-written + spec 5.5 by hand + the spec schemas through zod' },
  { subject: 'ours', kind: 'attested', label: 'ours, receive()' },
  { subject: 'ours', kind: 'ordered', label: 'ours, one stream, ordering off' },
  { subject: 'ours-enforce', kind: 'ordered', label: 'ours, one stream, ordering enforce' },
  { subject: 'ours', kind: 'hmac', label: 'ours, receive(), measured again (noise)', repeat: true },
  { subject: 'ours-otel-noop', kind: 'hmac', label: 'ours + openTelemetry(), no provider' },
  { subject: 'ours-otel-sdk', kind: 'hmac', label: 'ours + openTelemetry() on the SDK' },
  { subject: 'ours-channel', kind: 'hmac', label: 'ours + a receive tracing-channel subscriber' },
];

/** Run lengths: the early window, and the steady slope's two lengths after the warm-up. */
function lengths(quick: boolean) {
  return quick
    ? { early: 100, warmup: 400, short: 100, long: 400 }
    : { early: 1000, warmup: 5000, short: 1000, long: 5000 };
}

/**
 * `--quick`: the HMAC receivers only, on short runs (the steady figure is then still mostly the JIT compiling).
 * `--insn-case <subject>[:<kind>]` (repeatable): only the cases named (`ours` names its repeat too).
 */
export function casesFor(quick: boolean, only?: readonly string[]): typeof CASES {
  const cases = quick
    ? CASES.filter((c) => c.kind === 'hmac' && !c.repeat && ['hand', 'stripe', 'ours'].includes(c.subject))
    : CASES;
  if (only === undefined || only.length === 0) return cases;
  return cases.filter((c) => only.some((name) => name === c.subject || name === `${c.subject}:${c.kind}`));
}

const BODY_BYTES = 1024;

const KIND_LABELS: Record<InsnKind, string> = { hmac: 'HMAC', attested: 'attested', ordered: 'HMAC, in order' };

type Fixtures = Record<InsnKind, { one: string; many: string }>;
type Lengths = ReturnType<typeof lengths>;

/** One Node line's figures: every case, and where a steady delivery of ours goes when it was profiled. */
interface LineFigures {
  line: NodeLine;
  node: number;
  measured: Measured[];
  profile: [number, string][];
}

async function run(options: BenchOptions): Promise<string> {
  const missing = ensureValgrind(options.progress);
  if (missing !== undefined) return `Instruction counts (callgrind)\n${verdict('skipped', missing)}`;
  const n = lengths(options.quick);
  const cases = casesFor(options.quick, options.insnCases);
  if (cases.length === 0) return `Instruction counts (callgrind)\n${verdict('skipped', 'no case matches --insn-case')}`;
  const resolved = resolveNodeLines(options.insnNodes ?? defaultNodeLines(options.quick), options.progress);
  const program = await buildProgram();
  const fixtures = await writeFixtures(cases, n, options);
  const figures: LineFigures[] = [];
  for (const [index, line] of resolved.lines.entries()) {
    // The profile (two more callgrind_annotate reads) is taken on the first line only.
    figures.push(measureLine(line, { program, cases, fixtures, n, options, profiled: index === 0 }));
  }
  const bundle = await workerBundle();
  return report(figures, resolved.missing, bundle, n);
}

/** Signs the deliveries of every kind the cases use, and writes each kind's fixtures (one delivery, and all). */
async function writeFixtures(cases: typeof CASES, n: Lengths, options: BenchOptions): Promise<Fixtures> {
  const signer = await createBenchSigner();
  const setup = setupOf(signer);
  const fixtures = {} as Fixtures;
  for (const kind of new Set<InsnKind>(['hmac', ...cases.map((c) => c.kind)])) {
    options.progress(`signing ${n.warmup + n.long} ${kind} deliveries of ${BODY_BYTES} bytes`);
    const pool =
      kind === 'ordered'
        ? await signOrderedPool(signer, n.warmup + n.long, BODY_BYTES)
        : await signPool(signer, kind, n.warmup + n.long, BODY_BYTES);
    fixtures[kind] = { one: join(PROGRAM_DIR, `${kind}-1.json`), many: join(PROGRAM_DIR, `${kind}-many.json`) };
    writeFixture(fixtures[kind].one, setup, pool.slice(0, 1));
    writeFixture(fixtures[kind].many, setup, pool);
  }
  return fixtures;
}

/**
 * The steady slope: two kept callgrind runs after the warm-up, their engine costs (and, for the profiled case, the top
 * items) read from `callgrind_annotate`, and both files removed even when a run or an annotation fails: a
 * 10,000-delivery callgrind file is tens of MB.
 */
function steadyPair(run: (length: number) => CallgrindRun, n: Lengths, profiled: boolean) {
  const kept: string[] = [];
  const keep = (length: number) => {
    const result = run(n.warmup + length);
    kept.push(result.outFile!);
    return result;
  };
  try {
    const short = keep(n.short);
    const long = keep(n.long);
    const inclusive = { inclusive: true };
    const steadyEngine = windowEngineCosts(
      engineCosts(annotate(long.outFile!, inclusive)),
      engineCosts(annotate(short.outFile!, inclusive)),
      n.long - n.short,
    );
    const profile = profiled
      ? topPerDelivery(annotate(long.outFile!), annotate(short.outFile!), n.long - n.short, 12)
      : undefined;
    return { steady: (long.instructions - short.instructions) / (n.long - n.short), steadyEngine, profile };
  } finally {
    for (const file of kept) rmSync(join(file, '..'), { recursive: true, force: true });
  }
}

/** Every case on one Node line: six callgrind runs each (import, first answer, ready, early, and the steady pair). */
function measureLine(
  line: NodeLine,
  plan: {
    program: string;
    cases: typeof CASES;
    fixtures: Fixtures;
    n: Lengths;
    options: BenchOptions;
    profiled: boolean;
  },
): LineFigures {
  const { program, fixtures, n, options } = plan;
  const count = (spec: Omit<RunSpec, 'importOnly'> & { importOnly?: boolean }, keep = false) => {
    options.progress(
      `callgrind on Node ${line.version}: ${spec.subject} ${spec.kind} ${spec.importOnly ? 'import' : `${spec.count} deliveries`}`,
    );
    return callgrind(program, { importOnly: false, ...spec }, keep, line.bin);
  };
  const node = count({ subject: 'none', kind: 'hmac', fixture: fixtures.hmac.one, count: 0 }).instructions;
  const measured: Measured[] = [];
  let profile: [number, string][] = [];
  for (const { subject, kind, label, repeat } of plan.cases) {
    const { one, many } = fixtures[kind];
    const imported = count({ subject, kind, fixture: one, count: 0, importOnly: true }).instructions;
    const first = count({ subject, kind, fixture: one, count: 1 }).instructions;
    const ready = count({ subject, kind, fixture: many, count: 0 }).instructions;
    const early = count({ subject, kind, fixture: many, count: n.early }).instructions;
    const profiled = plan.profiled && subject === 'ours' && kind === 'hmac' && !repeat;
    const pair = steadyPair((length) => count({ subject, kind, fixture: many, count: length }, true), n, profiled);
    if (pair.profile) profile = pair.profile;
    measured.push({
      subject,
      kind,
      label,
      importCost: imported - node,
      firstAnswer: first - node,
      early: (early - ready) / n.early,
      steady: pair.steady,
      steadyEngine: pair.steadyEngine,
      ...(repeat ? { repeat } : {}),
    });
  }
  return { line, node, measured, profile };
}

const millions = (value: number) => `${(value / 1e6).toFixed(1)} M`;
const lineTitle = (line: NodeLine) =>
  `Node ${line.version}${line.name === 'this' ? ' (the Node running the bench)' : ''}`;

function report(
  figures: LineFigures[],
  missing: string[],
  bundle: Awaited<ReturnType<typeof workerBundle>>,
  n: Lengths,
): string {
  const profiled = figures.find((f) => f.profile.length > 0);
  return [
    `Instruction counts (valgrind --tool=callgrind; node ${NODE_FLAGS.join(' ')}; ${BODY_BYTES}-byte deliveries)`,
    `early = the first ${int(n.early)} deliveries of a fresh process; ` +
      `steady = the slope from ${int(n.warmup + n.short)} to ${int(n.warmup + n.long)} deliveries; ` +
      `measured on ${figures.map((f) => `Node ${f.line.version}`).join(' and ')}`,
    "a steady verdict stands when the whole window and the window less V8's compiling and GC agree; otherwise unsure",
    ...missing.map((why) => verdict('skipped', why)),
    ...figures.flatMap((f) => ['', ...lineReport(f)]),
    '',
    table(
      `Workers bundle of a minimal fetch handler (esbuild, minified, workerd conditions): ${bytes(bundle.total)}`,
      ['package', 'bytes'],
      bundle.byPackage.map(([name, size]) => [name, bytes(size)]),
    ),
    ...(profiled
      ? [
          '',
          table(
            `Where a steady delivery of ours (HMAC) goes on ${lineTitle(profiled.line)}: callgrind_annotate, exclusive, per delivery (JIT code is ???)`,
            ['instructions', 'function'],
            profiled.profile.map(([instructions, name]) => [int(instructions), name]),
            ['right', 'left'],
          ),
        ]
      : []),
    '',
    ...figures.flatMap((f) => [
      `Targets (issue 28 §2) on ${lineTitle(f.line)}`,
      ...insnVerdicts(f.measured, bundle.total),
      ...(telemetryVerdicts(f.measured).length > 0
        ? [`Telemetry (issue 30) on ${lineTitle(f.line)}`, ...telemetryVerdicts(f.measured)]
        : []),
      '',
    ]),
  ].join('\n');
}

/** One line's tables: every receiver, and the telemetry rows ÷ ours. */
function lineReport({ line, node, measured }: LineFigures): string[] {
  const ours = measured.find((m) => m.subject === 'ours' && m.kind === 'hmac' && !m.repeat);
  const telemetryRows = measured.filter(
    (m) =>
      m.kind === 'hmac' && (m.subject === 'ours' || m.subject.startsWith('ours-otel') || m.subject === 'ours-channel'),
  );
  const rows = measured.map((m) => [
    `${m.label} (${KIND_LABELS[m.kind]})`,
    millions(m.importCost),
    millions(m.firstAnswer),
    int(m.early),
    int(m.steady),
    m.steadyEngine ? int(m.steadyEngine.compiling) : '—',
    m.steadyEngine ? int(m.steadyEngine.collecting) : '—',
    int(steadyLessEngine(m) ?? Number.NaN),
  ]);
  return [
    table(
      `${lineTitle(line)}, node itself with the fixture read: ${millions(node)}. Per receiver: cold (beyond node) and per delivery (instructions); of the steady window, what V8 spent compiling and collecting garbage`,
      [
        'receiver',
        'import',
        'start → first answer',
        'early / delivery',
        'steady / delivery',
        'of it compiling',
        'of it GC',
        'steady less both',
      ],
      rows,
    ),
    ...(ours && telemetryRows.length > 1
      ? [
          '',
          table(
            `Telemetry (issue 30) on ${lineTitle(line)}: per delivery (instructions), and ÷ ours (HMAC, receive()) measured in this run`,
            ['receiver', 'early / delivery', '÷ ours', 'steady / delivery', '÷ ours'],
            telemetryRows.map((m) => [
              m.label,
              int(m.early),
              fineRatio(m.early / ours.early),
              int(m.steady),
              fineRatio(m.steady / ours.steady),
            ]),
          ),
        ]
      : []),
  ];
}

export const insnSection: Section = {
  name: 'insn',
  title: 'instruction counts under callgrind (cold, early, steady; Workers bundle)',
  run,
};
