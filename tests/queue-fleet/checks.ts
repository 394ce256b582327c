/**
 * What the queue-mode fleet test asserts from the ledger (ledger.ts), as lists of violations (empty when the rule
 * holds), so a failure names the event and what happened to it.
 *
 * At-least-once, exactly as queue mode gives it and as checked here:
 *
 * - nothing acknowledged is lost: every event the HTTP receiver answered 2xx for reaches the queue once (the other
 *   deliveries of it are `duplicate`) and its handler runs to the end (a `done` line) at least once;
 * - a handler run that did not finish runs again: its worker was killed mid-run, it threw, or it finished but its
 *   completion reached neither the store nor the queue (both down at once: the store's complete failed and the
 *   worker could not tell the queue either, so the queue hands the job out again once the worker's hold on it ends).
 *   Those are the only reruns: every earlier run of an event must end in a kill, a `fail`, a `release` or a complete
 *   that did not succeed, before the next run starts;
 * - nothing that finished runs again: once the store recorded the event complete (`complete ok`), no handler run of
 *   it starts, even when the queue runs its job again (a worker killed between the store's complete and the queue's
 *   job completion): the rerun's claim answers `completed`, a duplicate;
 * - order: every run of a stream's event ends before the first run of its next event starts (the queue hands out a
 *   stream's next job only once the previous one succeeded), or, for an event skipped by the operator, its runs come
 *   before the skip and the next event's after it.
 */
import type { TestEnvelope } from '@kyb-webhooks/testing';
import type { Line } from './ledger.js';

export interface RunsOptions {
  /** PIDs of the processes that were SIGKILLed: their unfinished runs explain a rerun. */
  killed: ReadonlySet<number>;
  /** Event ids skipped by the operator (`skipBlocked`): never processed, and their stream moves on after the skip. */
  skipped?: ReadonlySet<string>;
}

/** `streams`: each stream's events in seq order. */
export function runViolations(
  lines: readonly Line[],
  streams: readonly TestEnvelope[][],
  options: RunsOptions,
): string[] {
  const violations: string[] = [];
  const byEvent = new Map<string, Line[]>();
  for (const line of lines) {
    if (!line.eventId) continue;
    const list = byEvent.get(line.eventId) ?? [];
    list.push(line);
    byEvent.set(line.eventId, list);
  }
  for (const stream of streams) {
    /** The previous event of the stream, and the ledger index its last run (or its skip) ended at. */
    let previous: { label: string; endedAt: number | undefined } | undefined;
    for (const envelope of stream) {
      const label = `${envelope.stream_id}#${envelope.seq}`;
      const mine = byEvent.get(envelope.event_id) ?? [];
      const of = (kind: Line['kind'], result?: string) =>
        mine.filter((line) => line.kind === kind && (result === undefined || line.result === result));
      const starts = of('start');
      // Enqueued once: later deliveries are duplicates. (A receiver killed between an enqueue and its ledger line
      // leaves only the duplicates of the retries: at least one enqueue line, at most one that wrote the job.)
      const enqueued = of('enqueue', 'enqueued');
      if (enqueued.length > 1) violations.push(`${label}: enqueued ${enqueued.length} times`);
      if (of('enqueue').length === 0) violations.push(`${label}: never reached the queue`);

      const completed = of('complete', 'ok');
      if (completed.length > 1) violations.push(`${label}: completed ${completed.length} times in the store`);
      const completedAt = completed[0]?.index;
      if (completedAt !== undefined && starts.some((start) => start.index > completedAt)) {
        violations.push(`${label}: its handler ran again after the store recorded it complete`);
      }
      const runs = mine.filter((line) => line.kind === 'start' || line.kind === 'done' || line.kind === 'fail');
      let endedAt = runs.at(-1)?.index;
      if (options.skipped?.has(envelope.event_id)) {
        if (of('done').length > 0) violations.push(`${label}: skipped, yet its handler finished`);
        const skip = lines.find((line) => line.kind === 'skip' && line.streamId === envelope.stream_id)?.index;
        if (skip === undefined || (endedAt !== undefined && endedAt > skip)) {
          violations.push(`${label}: ran after it was skipped`);
        }
        endedAt = skip;
      } else if (of('done').length === 0) {
        violations.push(`${label}: no handler run finished`);
      }

      // Every run but the last must be one that did not finish, and something must say why, before the next run.
      starts.slice(0, -1).forEach((start, i) => {
        const next = starts[i + 1]!.index;
        const ended = mine.some(
          (line) =>
            line.pid === start.pid &&
            line.index > start.index &&
            line.index < next &&
            (line.kind === 'fail' || line.kind === 'release' || (line.kind === 'complete' && line.result !== 'ok')),
        );
        if (!ended && !options.killed.has(start.pid)) {
          violations.push(
            `${label}: run ${i + 1} (pid ${start.pid}) ran again though it was neither killed nor failed`,
          );
        }
      });

      if (previous && starts[0] && (previous.endedAt === undefined || starts[0].index < previous.endedAt)) {
        violations.push(`${label}: started before every run of ${previous.label} had ended`);
      }
      previous = { label, endedAt };
    }
  }
  return violations;
}

/** Whether a handler run of every event of `envelopes` finished. */
export function allDone(lines: readonly Line[], envelopes: readonly TestEnvelope[]): boolean {
  const done = new Set(lines.filter((line) => line.kind === 'done').map((line) => line.eventId));
  return envelopes.every((envelope) => done.has(envelope.event_id));
}

/** The lines of one event, of some kinds. */
export function linesOf(lines: readonly Line[], eventId: string, ...kinds: Line['kind'][]): Line[] {
  return lines.filter((line) => line.eventId === eventId && (kinds.length === 0 || kinds.includes(line.kind)));
}
