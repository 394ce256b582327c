/*
 * The `kyb-webhooks:receive` tracing channel around `receiver.receive` (telemetry/channels.ts): one trace per
 * delivery, described with what was verified, never with what a sender merely claimed.
 */
import { readHeader } from '../http/headers.js';
import { parseAttempt } from '../pipeline/checks.js';
import { parseSignatureHeader } from '../verify/signature.js';
import type { ReceiveInput, ReceiveResult } from '../receiver-types.js';
import { TRACING_CHANNELS, tracingChannelsOf, type ReceiveTrace } from './channels.js';
import { Observers, type ReceiverTelemetry } from './observers.js';

type Receive = (input: ReceiveInput) => Promise<ReceiveResult>;

/**
 * `receive`, watched by the receive channel while someone subscribes to it and by the receiver's `telemetry`; `receive`
 * itself when neither can ever watch.
 */
export function withReceiveTrace(
  receive: Receive,
  telemetry: ReceiverTelemetry | undefined,
  hmacChecked: boolean,
): Receive {
  const observers = new Observers('receive', tracingChannelsOf(TRACING_CHANNELS.receive), telemetry);
  if (!observers.channels && !telemetry) return receive;
  return function tracedReceive(input) {
    if (!observers.active) return receive(input);
    return observers.run(
      receiveTraceOf(input),
      () => receive(input),
      (trace, result) => describeAnswer(trace, result, hmacChecked ? input : undefined),
    );
  };
}

function receiveTraceOf(input: ReceiveInput): ReceiveTrace {
  const trace: ReceiveTrace = { method: input.method ?? 'POST' };
  const attempt = parseAttempt(readHeader(input.headers, 'service-delivery-attempt'));
  if (attempt !== undefined) trace.deliveryAttempt = attempt;
  return trace;
}

/**
 * The answer and, once it was authenticated, the event it was about, and when the service signed it: the signature
 * header's `t`, read only when the receiver checks HMACs, so an event on the result means the header verified.
 */
function describeAnswer(trace: ReceiveTrace, result: ReceiveResult, signed: ReceiveInput | undefined): void {
  trace.status = result.status;
  if (result.code !== undefined) trace.code = result.code;
  const event = result.event;
  if (event === undefined) return;
  trace.eventId = event.event_id;
  trace.eventType = event.event;
  trace.streamId = event.stream_id;
  trace.seq = event.seq;
  trace.apiVersion = event.api_version;
  if (signed) {
    try {
      trace.signedAt = parseSignatureHeader(readHeader(signed.headers, 'service-kyb-signature') ?? '').timestamp;
    } catch {
      // Verified moments ago; a header that no longer parses is left out rather than guessed.
    }
  }
}
