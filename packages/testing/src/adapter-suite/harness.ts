/**
 * The receiver the adapter conformance suite drives, and the record of what its handlers did, behind one interface
 * whose reads are asynchronous: so the same cases can observe a receiver in this process or one in another runtime
 * (Bun, Deno, workerd) through the control endpoint of ./remote.ts. Runtime-neutral: no node: module, no Buffer.
 */
import { createReceiver, type ReceiveResult, type ReceiverOptions } from '@kyb-webhooks/core';

/**
 * One run of the handler the suite registers: which event, and whether it succeeded.
 *
 * @example
 * ```ts
 * const call: HandlerCall = { eventId: '01JD…', type: 'kyb.data_request.refused', ok: true }
 * ```
 */
export interface HandlerCall {
  eventId: string;
  type: string;
  ok: boolean;
}

/**
 * What the suite wants the handler to do for one event id.
 *
 * @example
 * ```ts
 * const plan: HandlerPlan = { failures: 1, delayMs: 150 } // or { hang: true }
 * ```
 */
export interface HandlerPlan {
  /** Throw this many times before succeeding. */
  failures?: number;
  /** Wait before finishing, so concurrent deliveries overlap. */
  delayMs?: number;
  /** Never finish: a stuck handler (a database call without a timeout). */
  hang?: boolean;
}

/**
 * A released answer as the release handler saw it.
 *
 * @example
 * ```ts
 * const answer: SeenAnswer = { subject: 'svcid:0xabc', name: 'director_name', value: 'Ada' }
 * ```
 */
export interface SeenAnswer {
  subject: string;
  name: string;
  value: unknown;
}

/**
 * One call of the adapter's `onResult` hook, as the suite records it.
 *
 * @example
 * ```ts
 * const seen: ResultRecord = { status: 401, code: 'signature_mismatch' }
 * ```
 */
export interface ResultRecord {
  status: number;
  /** The result's code, when it has one. */
  code?: string;
  /** The verified event's id, when the delivery got that far. */
  eventId?: string;
}

/**
 * Everything the handlers of one receiver recorded, as plain JSON.
 *
 * @example
 * ```ts
 * const log: HandlerLog = { calls: [], unknownCalls: [], answers: {}, results: [] }
 * ```
 */
export interface HandlerLog {
  calls: HandlerCall[];
  /** Event ids onUnknown was called with. */
  unknownCalls: string[];
  /** The released answers each release handler saw, by event id. */
  answers: Record<string, SeenAnswer[]>;
  /** What the adapter's `onResult` hook was called with, oldest first (apps started with {@link recordResults}). */
  results: ResultRecord[];
}

/**
 * What the conformance cases read and steer, wherever the receiver runs.
 *
 * @example
 * ```ts
 * await harness.plan(envelope.event_id, { failures: 1 })
 * expect(await harness.callsFor(envelope.event_id)).toHaveLength(2)
 * ```
 */
export interface Harness {
  /** Every handler call so far, oldest first. */
  calls(): Promise<HandlerCall[]>;
  callsFor(eventId: string): Promise<HandlerCall[]>;
  /** Event ids onUnknown was called with. */
  unknownCalls(): Promise<string[]>;
  answersFor(eventId: string): Promise<SeenAnswer[] | undefined>;
  /** Set what the handler does for this event id from now on. */
  plan(eventId: string, plan: HandlerPlan): Promise<void>;
  /** Every call of the adapter's `onResult` hook so far (apps started with it only). */
  results(): Promise<ResultRecord[]>;
}

/**
 * A receiver built from `options` with the suite's handlers registered (onAny follows the plans, the release handler
 * records the answers, onUnknown records ids), plus its log.
 *
 * @example
 * ```ts
 * const { receiver, harness, log } = createHarness({ secrets: { '1': 'whsec_…' } })
 * const app = await startApp(receiver)
 * ```
 */
export function createHarness(options: ReceiverOptions) {
  const receiver = createReceiver(options);
  const log: HandlerLog = { calls: [], unknownCalls: [], answers: {}, results: [] };
  const plans = new Map<string, HandlerPlan>();
  receiver.onAny(async (event) => {
    const eventId = event.event_id;
    const call: HandlerCall = { eventId, type: event.event, ok: false };
    log.calls.push(call);
    const plan = plans.get(eventId);
    if (plan?.delayMs) await sleep(plan.delayMs);
    if (plan?.hang) await new Promise(() => {});
    if (plan?.failures) {
      plan.failures -= 1;
      throw new Error('planned handler failure');
    }
    call.ok = true;
  });
  receiver.on('kyb.data_request.released', (event, { answers: released }) => {
    log.answers[event.event_id] = [...released].map(({ subject, name, value }) => ({ subject, name, value }));
  });
  receiver.onUnknown((event) => {
    log.unknownCalls.push(event.event_id);
  });
  const harness: Harness = {
    calls: async () => [...log.calls],
    callsFor: async (eventId) => log.calls.filter((call) => call.eventId === eventId),
    unknownCalls: async () => [...log.unknownCalls],
    answersFor: async (eventId) => log.answers[eventId],
    plan: async (eventId, plan) => void plans.set(eventId, { ...plan }),
    results: async () => [...log.results],
  };
  return { receiver, harness, log, plans, onResult: recordResults(log) };
}

/**
 * An `onResult` hook that records each result in `log.results` and then fails: synchronously on odd calls, with a
 * rejected promise on even ones. An adapter passes the suite only if neither changes its answer (nor becomes an
 * unhandled rejection).
 *
 * @example
 * ```ts
 * const { receiver, log } = createHarness(options)
 * const app = await startApp(receiver, { onResult: recordResults(log) })
 * ```
 */
export function recordResults(log: HandlerLog): (result: ReceiveResult) => Promise<never> {
  return (result) => {
    const record: ResultRecord = { status: result.status };
    if (result.code !== undefined) record.code = result.code;
    if (result.event !== undefined) record.eventId = result.event.event_id;
    log.results.push(record);
    if (log.results.length % 2 === 1) throw new Error('planned onResult failure');
    return Promise.reject(new Error('planned onResult rejection'));
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
