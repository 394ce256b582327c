/*
 * The trace context a queued event carries from the receiving side to its worker (queue mode, docs/observability.md):
 * what the receiver's `telemetry.inject` returned, kept in the job in the clear. It is read back from a queue that
 * anyone with write access to it could have changed, so only a few short strings pass, and only into a span link:
 * never into what happens to the event.
 */
import { isEnabled, type ReceiverTelemetry } from './observers.js';

/** At most this many entries (traceparent, tracestate, baggage, … with room to spare). */
const MAX_ENTRIES = 8;
/** Characters per key or value: a traceparent is 55; tracestate's own limit is 512. */
const MAX_LENGTH = 512;

/**
 * The carrier `telemetry.inject()` returns for the job being enqueued now, or undefined (none, empty, or it threw).
 * Not asked while the layer's `enabled()` says it records nothing: there is no span to carry then.
 */
export function injectedCarrier(telemetry: ReceiverTelemetry | undefined): Record<string, string> | undefined {
  if (!telemetry?.inject || !isEnabled(telemetry)) return undefined;
  try {
    return carrierOf(telemetry.inject());
  } catch {
    // An observability layer's failure never changes what happens to the delivery.
    return undefined;
  }
}

/** `value` as a carrier: its first entries whose key and value are short strings; undefined when none is left. */
export function carrierOf(value: unknown): Record<string, string> | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  let carrier: Record<string, string> | undefined;
  let entries = 0;
  for (const [key, entry] of Object.entries(value)) {
    if (entries === MAX_ENTRIES) break;
    if (typeof entry !== 'string' || key.length > MAX_LENGTH || entry.length > MAX_LENGTH) continue;
    // A null-prototype object: a key such as "__proto__" stays a plain entry.
    carrier ??= Object.create(null) as Record<string, string>;
    carrier[key] = entry;
    entries += 1;
  }
  return carrier;
}
