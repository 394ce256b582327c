/*
 * The `kyb-webhooks:receive` tracing channel around `receiver.receive` (telemetry/channels.ts): one trace per
 * delivery, described with what was verified, never with what a sender merely claimed.
 */
import { readHeader } from '../http/headers.js';
import { parseAttempt } from '../pipeline/checks.js';
import type { ReceiveInput, ReceiveResult } from '../receiver-types.js';
import { TRACING_CHANNELS, traceOperation, tracingChannelsOf, type ReceiveTrace } from './channels.js';

type Receive = (input: ReceiveInput) => Promise<ReceiveResult>;

/**
 * `receive`, published on the receive channel whenever someone subscribes to it; `receive` itself where the runtime
 * has no diagnostics_channel.
 */
export function withReceiveTrace(receive: Receive): Receive {
  const channels = tracingChannelsOf(TRACING_CHANNELS.receive);
  if (!channels) return receive;
  return function tracedReceive(input) {
    if (!channels.observed) return receive(input);
    return traceOperation(channels, receiveTraceOf(input), () => receive(input), describeAnswer);
  };
}

function receiveTraceOf(input: ReceiveInput): ReceiveTrace {
  const trace: ReceiveTrace = { method: input.method ?? 'POST' };
  const attempt = parseAttempt(readHeader(input.headers, 'service-delivery-attempt'));
  if (attempt !== undefined) trace.deliveryAttempt = attempt;
  return trace;
}

/** The answer and, once it was authenticated, the event it was about. */
function describeAnswer(trace: ReceiveTrace, result: ReceiveResult): void {
  trace.status = result.status;
  if (result.code !== undefined) trace.code = result.code;
  const event = result.event;
  if (event === undefined) return;
  trace.eventId = event.event_id;
  trace.eventType = event.event;
  trace.streamId = event.stream_id;
  trace.seq = event.seq;
  trace.apiVersion = event.api_version;
}
