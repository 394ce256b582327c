/*
 * What a queue worker borrows from the receiver it runs for (queue mode, docs/queue-mode.md): the receiver's own
 * dedupe, ordering and settle steps, and how it reads a release's answers. Kept in a WeakMap rather than on the
 * receiver object, so applications see no such property and the worker needs no export of the receiver's insides.
 */
import type { VerifiedItem } from '../pipeline/checks.js';
import type { ReceiveResult } from '../receiver-types.js';
import type { Logger } from '../log/logger.js';
import type { ReceiverTelemetry } from '../telemetry/observers.js';
import type { PayloadCipher } from './payload-cipher.js';
import type { EventQueue } from './types.js';

/** The parts of a receiver its workers run jobs with. */
export interface WorkerPorts {
  /** Steps 6 to 8 as inline (or the ordered path): claim, run the handlers, settle. */
  process(item: VerifiedItem): Promise<ReceiveResult>;
  /** `attestation.answersClaim`. */
  answersClaim: string | undefined;
  /** The receiver's `queue` option, the worker's default queue. */
  queue: EventQueue | undefined;
  /** With `queueEncryption`: opens each job's payload before it runs. */
  cipher: PayloadCipher | undefined;
  logger: Logger | undefined;
  /** The receiver's `telemetry`, told when a stream becomes blocked. */
  telemetry: ReceiverTelemetry | undefined;
}

const portsByReceiver = new WeakMap<object, WorkerPorts>();

/** Called by `createReceiver` for every receiver it makes. */
export function linkWorkerPorts(receiver: object, ports: WorkerPorts): void {
  portsByReceiver.set(receiver, ports);
}

/** The ports of a receiver made by `createReceiver`, or undefined for any other object. */
export function workerPortsOf(receiver: object): WorkerPorts | undefined {
  return portsByReceiver.get(receiver);
}
