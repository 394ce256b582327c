/** What the receiver and worker processes of the queue-mode fleet test share: their environment and logging. */
import type { LogEntry } from '@kyb-webhooks/core';
import type { EngineEnv } from './engines.js';

/** The environment the test (processes.ts, rig.ts) starts them with. */
export interface ChildEnv extends EngineEnv {
  KYB_SECRET: string;
  KYB_ATTESTATION_ISSUER: string;
  KYB_AUDIENCE: string;
  KYB_JWKS_URL: string;
  KYB_LEDGER: string;
  KYB_PLAN: string;
  /** The receiver's port; 0 or unset: a free one. */
  KYB_PORT?: string;
  /** Jobs a worker runs at once; default 3. */
  KYB_CONCURRENCY?: string;
  /** The options of the receivers' queuePayloadEncryption (queueEncryption), as JSON. */
  KYB_QUEUE_KEYS?: string;
}

export const childEnv = process.env as unknown as ChildEnv;

// The test holds this process's stdin open: when it closes, the test process is gone (killed without its afterAll),
// and so must this process be.
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();

/**
 * The receivers' logger: warnings and errors on stderr, one line each (the test keeps the last lines of each process
 * and shows them when a scenario times out); the per-delivery info and debug lines are dropped.
 */
export function childLogger(entry: LogEntry): void {
  if (entry.level !== 'warn' && entry.level !== 'error') return;
  const error = entry.error ? ` (${entry.error.name}: ${entry.error.message})` : '';
  process.stderr.write(`${entry.level} ${entry.code ?? ''} ${entry.eventId ?? ''} ${entry.message}${error}\n`);
}

/** Errors an engine reports asynchronously (its server is down, …): expected in the restart scenario. */
export function reportError(error: unknown): void {
  process.stderr.write(`engine error: ${String((error as Error)?.message ?? error).split('\n')[0]}\n`);
}
