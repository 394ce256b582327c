/**
 * The one clock of a bench run (whole seconds, like `t`). Processes the bench starts (HTTP servers, the programs the
 * instruction-count section runs under valgrind) get the parent's value through `KYB_BENCH_NOW_MS`, so the pools the
 * parent signed are fresh for them too. A module of its own, free of imports: what the instruction-count programs
 * bundle from here must not pull in the test kit.
 */
export const BENCH_NOW_MS = Number(process.env['KYB_BENCH_NOW_MS'] ?? Math.floor(Date.now() / 1000) * 1000);
export const benchNow = (): number => BENCH_NOW_MS;
