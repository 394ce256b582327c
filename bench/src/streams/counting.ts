/**
 * A store that counts the calls the receiver makes through it, by method, and forwards them to a target that can be
 * swapped between runs. Each store call is one round trip to a server store (one command or statement; the wire
 * counters of backends.ts cross-check that), so calls per event are the round trips the brief's target is about.
 * Swapping the target lets one receiver, with its JWKS key already imported, work on a fresh store every round.
 */
import type { StreamCursorStore } from '@kyb-webhooks/core';

/** Calls by method name. */
export type CallCounts = Readonly<Record<string, number>>;

export interface CountingStore {
  /** What the receiver is given. */
  store: StreamCursorStore;
  /** The store the calls go to from now on. */
  use(target: StreamCursorStore): void;
  /** Calls so far, by method. */
  counts(): CallCounts;
}

/**
 * A Proxy rather than a hand-written wrapper: every method of the target is forwarded and counted, including any
 * the store contract gains later, and a capability the target lacks stays missing (the receiver probes for some).
 */
export function countingStore(initial: StreamCursorStore): CountingStore {
  let target = initial;
  const counts: Record<string, number> = {};
  const store = new Proxy({} as StreamCursorStore, {
    get(_, property) {
      const value: unknown = Reflect.get(target, property);
      if (typeof value !== 'function' || typeof property !== 'string') return value;
      return (...args: unknown[]): unknown => {
        counts[property] = (counts[property] ?? 0) + 1;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
    has: (_, property) => Reflect.has(target, property),
  });
  return {
    store,
    use(next) {
      target = next;
    },
    counts: () => ({ ...counts }),
  };
}

/** The difference of two snapshots of {@link CountingStore.counts}. */
export function diffCounts(after: CallCounts, before: CallCounts): Record<string, number> {
  return Object.fromEntries(Object.entries(after).map(([method, n]) => [method, n - (before[method] ?? 0)]));
}

/** Every count divided by `events`. */
export function perEvent(counts: CallCounts, events: number): Record<string, number> {
  return Object.fromEntries(Object.entries(counts).map(([method, n]) => [method, n / events]));
}

/** All calls. */
export function totalCalls(counts: CallCounts): number {
  return Object.values(counts).reduce((sum, n) => sum + n, 0);
}

/** `claim 1.00 · getCursor 1.00 · …`: the methods that were called, alphabetically. */
export function describeCalls(counts: CallCounts): string {
  return Object.entries(counts)
    .filter(([, n]) => n > 0)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([method, n]) => `${method} ${n.toFixed(2)}`)
    .join(' · ');
}
