/**
 * The truth of the queue-mode fleet test, kept outside the workers and the queue: an append-only text file that the
 * processes write one short line to at each step (appendFileSync with O_APPEND: a small write is atomic on Linux, so
 * lines of several processes never interleave, and the file's order is the order the steps happened in).
 *
 *   enqueue  <eventId> <streamId> <seq> <enqueued|duplicate> <pid> <key>   the HTTP receiver's enqueue resolved
 *   start    <eventId> <streamId> <seq> <pid> <attempt>             a handler began (attempt: the job's, 1-based)
 *   done     <eventId> <streamId> <seq> <pid> <attempt>             the handler returned
 *   fail     <eventId> <streamId> <seq> <pid> <attempt>             the handler threw (on purpose, see the plan)
 *   claim    <eventId> <acquired|in_progress|completed|error> <pid>  a worker's dedupe store answered a claim
 *   complete <eventId> <ok|lost|error> <pid>                        … a complete (lost: the claim was no longer held)
 *   release  <eventId> <ok|lost|error> <pid>                        … a release
 *   skip     <streamId>                                             the test is about to skip the stream's blocked job
 *   mark     <word>                                                 a moment the test notes (the server going down, …)
 *
 * Also the plan: what the test wants to go wrong at which event, a JSON file of `<streamId>#<seq>` to a fault, read
 * by the processes at each event (it is written before the events exist, as their ids are not known yet).
 */
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';

export type Fault =
  /** The handler's first run hangs (the test SIGKILLs its worker); later runs work. */
  | 'hang-once'
  /** The handler's first two runs hang (the test SIGKILLs each one's worker); the third works. */
  | 'hang-twice'
  /** The handler throws in its first three runs, then works. */
  | 'fail-3'
  /** The handler always throws. */
  | 'fail-always'
  /** The worker SIGKILLs itself right after the dedupe store's complete resolved, before the job is completed. */
  | 'kill-worker-after-complete'
  /** The HTTP receiver SIGKILLs itself right after the enqueue resolved, before it answers. */
  | 'kill-receiver-after-enqueue';

export type Plan = Record<string, Fault>;

export function planKey(streamId: string, seq: number): string {
  return `${streamId}#${seq}`;
}

export function writePlan(path: string, plan: Plan): void {
  writeFileSync(path, JSON.stringify(plan));
}

export function faultAt(path: string | undefined, streamId: string, seq: number): Fault | undefined {
  if (!path) return undefined;
  try {
    return (JSON.parse(readFileSync(path, 'utf8')) as Plan)[planKey(streamId, seq)];
  } catch {
    return undefined;
  }
}

/** Appends one line (the words joined by spaces). */
export function record(path: string, ...words: (string | number)[]): void {
  appendFileSync(path, `${words.join(' ')}\n`);
}

/** One parsed line; `index` is its place in the file. */
export interface Line {
  index: number;
  kind: 'enqueue' | 'start' | 'done' | 'fail' | 'claim' | 'complete' | 'release' | 'skip' | 'mark';
  eventId: string;
  streamId?: string;
  seq?: number;
  pid: number;
  attempt?: number;
  /** enqueue, claim, complete, release: what it resolved to. */
  result?: string;
  /** enqueue: the job's key (the event's dedupe key). */
  key?: string;
}

export function readLedger(path: string): Line[] {
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((text, index): Line => {
      const [kind, first, ...rest] = text.split(' ') as [Line['kind'], string, ...string[]];
      switch (kind) {
        case 'enqueue':
          return {
            index,
            kind,
            eventId: first,
            streamId: rest[0],
            seq: Number(rest[1]),
            result: rest[2],
            pid: Number(rest[3]),
            key: rest[4],
          };
        case 'start':
        case 'done':
        case 'fail':
          return {
            index,
            kind,
            eventId: first,
            streamId: rest[0],
            seq: Number(rest[1]),
            pid: Number(rest[2]),
            attempt: Number(rest[3]),
          };
        case 'skip':
          return { index, kind, eventId: '', streamId: first, pid: 0 };
        case 'mark':
          return { index, kind, eventId: '', result: first, pid: 0 };
        default:
          return { index, kind, eventId: first, result: rest[0], pid: Number(rest[1]) };
      }
    });
}

/** How many lines of the ledger at `path` start with `prefix` (the handlers' "how often did I run before?"). */
export function countLines(path: string, prefix: string): number {
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return 0;
  }
  let count = 0;
  for (let at = text.indexOf(prefix); at !== -1; at = text.indexOf(prefix, at + 1)) {
    if (at === 0 || text[at - 1] === '\n') count++;
  }
  return count;
}
