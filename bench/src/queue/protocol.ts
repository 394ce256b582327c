/** What the queue section and its child processes (server.ts, worker.ts) agree on. */
import type { ReceiverConfig } from '../receiver.js';

/** The durable engines measured: pg-boss on PostgreSQL, BullMQ on Redis. */
export const ENGINES = ['pgboss', 'bullmq'] as const;
export type EngineId = (typeof ENGINES)[number];

export const ENGINE_TITLE: Record<EngineId, string> = { pgboss: 'pg-boss', bullmq: 'BullMQ' };

/** One engine's queue as every process of a run opens it: the same queue name, schema or key prefix. */
export interface QueueConfig {
  engine: EngineId;
  /** postgres:// or redis:// on 127.0.0.1. */
  url: string;
  /** The engine's queue name (fresh per run and per measurement). */
  name: string;
  /** pg-boss: its PostgreSQL schema. BullMQ: its key prefix. */
  namespace: string;
  /** Above any backlog a run builds: the receiver must answer 200 queued, never 429 queue_full. */
  maxBacklog: number;
  /** pg-boss: the engine's `pollingIntervalSeconds` when not its default (KYB_BENCH_PGBOSS_POLLING_S). */
  pollingIntervalSeconds?: number;
}

/** pg-boss engine's default `pollingIntervalSeconds` (packages/queue-pgboss). */
export const PG_BOSS_DEFAULT_POLLING_S = 2;

/** How long the handler of every bench event takes (a setTimeout: it holds a slot, not a core). */
export const HANDLER_MS = 50;

/** The server of the answer measurement: inline (handlers before the answer) or queue mode on one engine. */
export type ServerMode = 'inline' | EngineId;

/** Passed to a child in `KYB_BENCH_QUEUE` (JSON). */
export interface ChildConfig {
  receiver: ReceiverConfig;
  /** Absent for the inline server. */
  queue?: QueueConfig;
  handlerMs: number;
}

export type ParentMessage =
  | { type: 'cpu'; id: number }
  /** worker.ts: start a worker of this concurrency (createQueueWorker(...).start()). */
  | { type: 'start'; concurrency: number }
  /** worker.ts: stop it (drains the running jobs), flush what was handled, then answer `stopped`. */
  | { type: 'stop' };

/** One handled event: [ms since the epoch at the handler's end, stream index, seq]. */
export type Handled = [at: number, stream: number, seq: number];

export type ChildMessage =
  | { type: 'ready'; port?: number }
  | { type: 'error'; message: string }
  | { type: 'cpu'; id: number; user: number; system: number }
  | { type: 'started' }
  | { type: 'handled'; events: Handled[] }
  | { type: 'stopped' };

/** Stream ids of a run: `dr_bench<tag>s<index>`; the index comes back in `Handled`. */
export function streamIdOf(tag: string, index: number): string {
  return `dr_bench${tag}s${index}`;
}

/** The stream index of a stream id made by {@link streamIdOf}, or -1. */
export function streamIndexOf(streamId: string): number {
  const match = /s(\d+)$/.exec(streamId);
  return match ? Number(match[1]) : -1;
}
