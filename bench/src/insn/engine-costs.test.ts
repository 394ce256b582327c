import { describe, expect, it } from 'vitest';
import { engineCosts, windowEngineCosts } from './engine-costs.js';

// Names as `callgrind_annotate --inclusive=yes` prints them for Node 22 (V8 12.4) and Node 26 (V8 14.6), file first.
const NODE22 = new Map([
  [
    '???:v8::internal::Compiler::CompileOptimized(v8::internal::Isolate*, v8::internal::Handle<v8::internal::JSFunction>, v8::internal::ConcurrencyMode, v8::internal::CodeKind)',
    1_000,
  ],
  ['???:v8::internal::Runtime_CompileOptimized(int, unsigned long*, v8::internal::Isolate*)', 1_001],
  [
    '???:v8::internal::Compiler::Compile(v8::internal::Isolate*, v8::internal::Handle<v8::internal::JSFunction>, v8::internal::Compiler::ClearExceptionFlag, v8::internal::IsCompiledScope*)',
    310,
  ],
  [
    '???:v8::internal::Compiler::Compile(v8::internal::Isolate*, v8::internal::Handle<v8::internal::SharedFunctionInfo>, v8::internal::Compiler::ClearExceptionFlag, v8::internal::IsCompiledScope*, v8::internal::CreateSourcePositions)',
    300,
  ],
  [
    '???:v8::internal::Compiler::CompileSharedWithBaseline(v8::internal::Isolate*, v8::internal::Handle<v8::internal::SharedFunctionInfo>, v8::internal::Compiler::ClearExceptionFlag, v8::internal::IsCompiledScope*)',
    80,
  ],
  [
    '???:v8::internal::Heap::CollectGarbage(v8::internal::AllocationSpace, v8::internal::GarbageCollectionReason, v8::GCCallbackFlags)',
    2_000,
  ],
  [
    '???:v8::internal::Heap::CollectGarbage(v8::internal::AllocationSpace, v8::internal::GarbageCollectionReason, v8::GCCallbackFlags)::{lambda()#2}::operator()() const',
    1_990,
  ],
  ['???:v8::internal::Heap::Scavenge()', 1_900],
  ['???:v8::internal::IncrementalMarkingJob::Task::RunInternal()', 700],
  ['???:v8::internal::IncrementalMarking::Step(v8::base::TimeDelta, unsigned long, v8::internal::StepOrigin)', 600],
  ['???:Builtins_JSEntry', 9_000],
]);
const NODE26 = new Map([
  [
    '???:v8::internal::Compiler::CompileOptimized(v8::internal::Isolate*, v8::internal::DirectHandle<v8::internal::JSFunction>, v8::internal::ConcurrencyMode, v8::internal::CodeKind)',
    500,
  ],
  [
    '???:v8::internal::Heap::CollectGarbage(v8::internal::AllocationSpace, v8::internal::GarbageCollectionReason, v8::GCCallbackFlags, v8::internal::PerformHeapLimitCheck, v8::internal::PerformIneffectiveMarkCompactCheck)',
    900,
  ],
  [
    '???:void heap::base::Stack::SetMarkerAndCallbackImpl<v8::internal::Heap::CollectGarbage(v8::internal::AllocationSpace, v8::internal::GarbageCollectionReason, v8::GCCallbackFlags, v8::internal::PerformHeapLimitCheck, v8::internal::PerformIneffectiveMarkCompactCheck)::$_0>(heap::base::Stack*, void*, void const*)',
    899,
  ],
  ['???:v8::internal::IncrementalMarking::AdvanceOnAllocation()', 410],
  ['???:v8::internal::IncrementalMarking::Step(v8::base::TimeDelta, unsigned long, v8::internal::StepOrigin)', 400],
  // A scavenge's job: 250 of it run by the main thread inside CollectGarbage, 300 by a platform worker.
  ['???:v8::platform::DefaultJobState::Join()', 250],
  ['???:v8::internal::ScavengerJobTask::Run(v8::JobDelegate*)', 550],
  ['???:v8::platform::DefaultJobWorker::Run()', 300],
]);

describe('engineCosts', () => {
  it('adds the roots of compiling and of collecting, each once, and nothing that runs inside them or around them', () => {
    // Compile(JSFunction) holds Compile(SharedFunctionInfo); the task holds a step and may finalise through
    // CollectGarbage; the runtime entry and the lambda hold what their roots hold; a job's task is run by the main
    // thread inside CollectGarbage and by the workers inside their own root.
    expect(engineCosts(NODE22)).toEqual({ compiling: 1_380, collecting: 2_600 });
    expect(engineCosts(NODE26)).toEqual({ compiling: 500, collecting: 1_600 });
  });

  it("counts the GC work a platform worker did, which is not under the main thread's roots", () => {
    const worker = '???:v8::platform::DefaultJobWorker::Run()';
    expect(engineCosts(new Map([[worker, 300]]))).toEqual({ compiling: 0, collecting: 300 });
  });

  it('is zero for a profile without V8 at work', () => {
    expect(engineCosts(new Map([['???:Builtins_JSEntry', 5]]))).toEqual({ compiling: 0, collecting: 0 });
  });
});

describe('windowEngineCosts', () => {
  it('is the difference between the longer and the shorter run, per delivery', () => {
    expect(
      windowEngineCosts({ compiling: 9_000, collecting: 5_000 }, { compiling: 1_000, collecting: 1_000 }, 4),
    ).toEqual({ compiling: 2_000, collecting: 1_000 });
  });
});
