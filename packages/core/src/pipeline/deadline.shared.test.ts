// SharedDeadline, the handlers' and the store's deadline of a receiver: every call still gets its own `ms`, though the
// calls share one timer, and an idle receiver's timer keeps no process alive.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SharedDeadline, TIMED_OUT } from './deadline.js';

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

/** A promise settled from outside, and whether the deadline's answer for it has come yet. */
function pendingWork<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const work = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { work, resolve, reject };
}

function watch<T>(answer: T | Promise<T>) {
  const seen: { answer?: T; error?: unknown } = {};
  void Promise.resolve(answer).then(
    (value) => (seen.answer = value),
    (error: unknown) => (seen.error = error),
  );
  return seen;
}

describe('SharedDeadline', () => {
  it('returns a value that is not a thenable as it is, with no timer', () => {
    vi.useFakeTimers();
    expect(new SharedDeadline(1_000).within(42)).toBe(42);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("answers with the work's value, or its error, when it settles in time", async () => {
    vi.useFakeTimers();
    const deadline = new SharedDeadline(1_000);
    expect(await deadline.within(Promise.resolve('done'))).toBe('done');
    await expect(deadline.within(Promise.reject(new Error('store down')))).rejects.toThrow('store down');
  });

  it('touches no timer for work already settled when handed over, and starts the deadline of work that settles a microtask later', async () => {
    vi.useFakeTimers();
    const deadline = new SharedDeadline(1_000);
    expect(await deadline.within(Promise.resolve('done'))).toBe('done');
    await expect(deadline.within(Promise.reject(new Error('store down')))).rejects.toThrow('store down');
    expect(vi.getTimerCount()).toBe(0);
    // Pending when handed over: its deadline starts, though it settles before any timer could run.
    expect(await deadline.within(Promise.resolve().then(() => 'next'))).toBe('next');
    expect(vi.getTimerCount()).toBe(1);
  });

  it('answers TIMED_OUT at ms, not a millisecond before', async () => {
    vi.useFakeTimers();
    const seen = watch(new SharedDeadline(1_000).within(new Promise(() => {})));
    await vi.advanceTimersByTimeAsync(999);
    expect(seen).toEqual({});
    await vi.advanceTimersByTimeAsync(1);
    expect(seen).toEqual({ answer: TIMED_OUT });
  });

  it('gives each call its own ms from when it started, whichever settled before it', async () => {
    vi.useFakeTimers();
    const deadline = new SharedDeadline(1_000);
    const first = pendingWork<string>();
    const early = watch(deadline.within(first.work));
    await vi.advanceTimersByTimeAsync(300);
    const middle = watch(deadline.within(new Promise(() => {})));
    await vi.advanceTimersByTimeAsync(200);
    const late = watch(deadline.within(new Promise(() => {})));
    first.resolve('in time');
    await vi.advanceTimersByTimeAsync(0);
    expect(early).toEqual({ answer: 'in time' });

    await vi.advanceTimersByTimeAsync(799); // t = 1,299
    expect(middle).toEqual({});
    await vi.advanceTimersByTimeAsync(1); // t = 1,300
    expect(middle).toEqual({ answer: TIMED_OUT });
    expect(late).toEqual({});
    await vi.advanceTimersByTimeAsync(199); // t = 1,499
    expect(late).toEqual({});
    await vi.advanceTimersByTimeAsync(1); // t = 1,500
    expect(late).toEqual({ answer: TIMED_OUT });
  });

  it('ignores a settlement after the deadline answered, and an expiry after the work settled', async () => {
    vi.useFakeTimers();
    const deadline = new SharedDeadline(1_000);
    const slow = pendingWork<string>();
    const timedOut = watch(deadline.within(slow.work));
    const quick = pendingWork<string>();
    const inTime = watch(deadline.within(quick.work));
    await vi.advanceTimersByTimeAsync(500);
    quick.resolve('quick');
    await vi.advanceTimersByTimeAsync(500);
    slow.resolve('too late');
    await vi.advanceTimersByTimeAsync(2_000);
    expect(timedOut).toEqual({ answer: TIMED_OUT });
    expect(inTime).toEqual({ answer: 'quick' });
  });

  it('times out every call of a crowd that settles out of order, each at its own due time', async () => {
    vi.useFakeTimers();
    const deadline = new SharedDeadline(1_000);
    const works = Array.from({ length: 3_000 }, () => pendingWork<number>());
    const seen = works.map((work) => watch(deadline.within(work.work)));
    // Most settle, the last ones first, leaving every tenth call waiting among them.
    for (let i = works.length - 1; i >= 0; i--) if (i % 10 !== 0) works[i]!.resolve(i);
    await vi.advanceTimersByTimeAsync(999);
    expect(seen.filter((s) => s.answer === TIMED_OUT)).toHaveLength(0);
    expect(seen.filter((s) => typeof s.answer === 'number')).toHaveLength(2_700);
    await vi.advanceTimersByTimeAsync(1);
    expect(seen.filter((s) => s.answer === TIMED_OUT)).toHaveLength(300);
    expect(seen.every((s, i) => s.answer === (i % 10 === 0 ? TIMED_OUT : i))).toBe(true);
  });

  it('keeps the deadline of a call started after the oldest settled', async () => {
    vi.useFakeTimers();
    const deadline = new SharedDeadline(1_000);
    for (let i = 0; i < 2_000; i++) await deadline.within(Promise.resolve(i)); // the front of the queue, all settled
    await vi.advanceTimersByTimeAsync(400);
    const seen = watch(deadline.within(new Promise(() => {})));
    await vi.advanceTimersByTimeAsync(999);
    expect(seen).toEqual({});
    await vi.advanceTimersByTimeAsync(1);
    expect(seen).toEqual({ answer: TIMED_OUT });
  });

  it('gives the first call after an idle spell its whole ms, even when the timer last waited less for another', async () => {
    vi.useFakeTimers();
    const deadline = new SharedDeadline(1_000);
    watch(deadline.within(new Promise(() => {})));
    await vi.advanceTimersByTimeAsync(300);
    const behind = pendingWork<string>();
    watch(deadline.within(behind.work));
    await vi.advanceTimersByTimeAsync(800); // t = 1,100: the first timed out, the timer waits 200 ms more for the second
    behind.resolve('done');
    await vi.advanceTimersByTimeAsync(100); // t = 1,200
    const lone = watch(deadline.within(new Promise(() => {})));
    await vi.advanceTimersByTimeAsync(999);
    expect(lone).toEqual({});
    await vi.advanceTimersByTimeAsync(1);
    expect(lone).toEqual({ answer: TIMED_OUT });
  });

  it('times a lone call out at ms even when the clock stands still (fake timers that leave performance alone)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const deadline = new SharedDeadline(1_000);
    await deadline.within(Promise.resolve('first'));
    await vi.advanceTimersByTimeAsync(300);
    const seen = watch(deadline.within(new Promise(() => {})));
    await vi.advanceTimersByTimeAsync(999);
    expect(seen).toEqual({});
    await vi.advanceTimersByTimeAsync(1);
    expect(seen).toEqual({ answer: TIMED_OUT });
  });

  it('times a call that waited behind another out between ms and two ms when the clock stands still', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const deadline = new SharedDeadline(1_000);
    const first = watch(deadline.within(new Promise(() => {})));
    await vi.advanceTimersByTimeAsync(300);
    const second = watch(deadline.within(new Promise(() => {})));
    await vi.advanceTimersByTimeAsync(1_000); // t = 1,300
    expect(first).toEqual({ answer: TIMED_OUT });
    expect(second).toEqual({});
    await vi.advanceTimersByTimeAsync(1_000); // t = 2,300
    expect(second).toEqual({ answer: TIMED_OUT });
  });

  /** The Node timers a deadline starts from now on, to ask whether each keeps the process alive (`hasRef`). */
  function timersStarted(): NodeJS.Timeout[] {
    const realSetTimeout = globalThis.setTimeout;
    const started: NodeJS.Timeout[] = [];
    vi.stubGlobal('setTimeout', (fn: () => void, ms: number) => {
      const timer = realSetTimeout(fn, ms);
      started.push(timer);
      return timer;
    });
    return started;
  }

  it('holds the process only while a call waits: its timer is unref’d when none does', async () => {
    const started = timersStarted();
    const deadline = new SharedDeadline(60_000);
    const work = pendingWork<string>();
    const answer = deadline.within(work.work);
    await Promise.resolve(); // the microtask that starts a pending call's deadline
    expect(started.map((timer) => timer.hasRef())).toEqual([true]);
    work.resolve('done');
    expect(await answer).toBe('done');
    expect(started.map((timer) => timer.hasRef())).toEqual([false]);
    const again = pendingWork<string>();
    const second = deadline.within(again.work);
    await Promise.resolve();
    expect(started.map((timer) => timer.hasRef())).toEqual([true]); // the same timer, re-armed
    again.resolve('done');
    await second;
    expect(started.map((timer) => timer.hasRef())).toEqual([false]);
    clearTimeout(started[0]);
  });

  it('lets the process go when a waiting call fails, as when it succeeds', async () => {
    const started = timersStarted();
    const deadline = new SharedDeadline(60_000);
    const work = pendingWork<string>();
    const answer = deadline.within(work.work);
    await Promise.resolve();
    expect(started.map((timer) => timer.hasRef())).toEqual([true]);
    work.reject(new Error('store down'));
    await expect(answer).rejects.toThrow('store down');
    expect(started.map((timer) => timer.hasRef())).toEqual([false]);
    clearTimeout(started[0]);
  });

  it('keeps holding the process while a second call still waits after the first settled', async () => {
    const started = timersStarted();
    const deadline = new SharedDeadline(60_000);
    const first = pendingWork<string>();
    const second = pendingWork<string>();
    const answers = [deadline.within(first.work), deadline.within(second.work)];
    await Promise.resolve();
    first.resolve('one');
    expect(await answers[0]).toBe('one');
    expect(started.map((timer) => timer.hasRef())).toEqual([true]);
    second.resolve('two');
    expect(await answers[1]).toBe('two');
    expect(started.map((timer) => timer.hasRef())).toEqual([false]);
    clearTimeout(started[0]);
  });

  it('gives a call that starts alone after an idle spell its whole ms, on the re-armed timer', async () => {
    const started = timersStarted();
    const deadline = new SharedDeadline(300);
    const first = pendingWork<string>();
    const firstAnswer = deadline.within(first.work);
    first.resolve('done');
    expect(await firstAnswer).toBe('done');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const second = watch(deadline.within(new Promise(() => {})));
    // Past the first call's 300 ms, within the second's: a timer left as the first call armed it would fire here.
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(second).toEqual({});
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(second).toEqual({ answer: TIMED_OUT });
    started.forEach((timer) => clearTimeout(timer));
  });

  it('still holds the process for the next call after a call that timed out settles late', async () => {
    const started = timersStarted();
    const deadline = new SharedDeadline(20);
    const slow = pendingWork<string>();
    expect(await deadline.within(slow.work)).toBe(TIMED_OUT);
    slow.resolve('too late');
    await slow.work;
    const next = pendingWork<string>();
    const answer = deadline.within(next.work);
    await Promise.resolve();
    expect(started.at(-1)!.hasRef()).toBe(true);
    next.resolve('done');
    expect(await answer).toBe('done');
    expect(started.at(-1)!.hasRef()).toBe(false); // (the first, fired, still says true: Node keeps the flag)
    started.forEach((timer) => clearTimeout(timer));
  });

  it('clears its timer when nothing waits, where a timer cannot be unref’d (Workers, Deno: a number)', async () => {
    vi.useFakeTimers();
    const fakeSetTimeout = globalThis.setTimeout;
    const fakeClearTimeout = globalThis.clearTimeout;
    const ids = new Map<number, ReturnType<typeof setTimeout>>();
    vi.stubGlobal('setTimeout', (fn: () => void, ms: number) => {
      const id = ids.size + 1;
      ids.set(id, fakeSetTimeout(fn, ms));
      return id;
    });
    vi.stubGlobal('clearTimeout', (id: number) => fakeClearTimeout(ids.get(id)));
    const deadline = new SharedDeadline(1_000);
    const first = pendingWork<string>();
    const answer = deadline.within(first.work);
    await Promise.resolve(); // its deadline starts: a timer
    expect(vi.getTimerCount()).toBe(1);
    first.resolve('done');
    expect(await answer).toBe('done');
    expect(vi.getTimerCount()).toBe(0);
    const seen = watch(deadline.within(new Promise(() => {})));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(seen).toEqual({ answer: TIMED_OUT });
  });
});
