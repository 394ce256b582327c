/**
 * Ours with `telemetry: openTelemetry()` and no OpenTelemetry provider registered: the API's no-op global tracer and
 * meter, what a library user who installs the layer but never starts an SDK pays (issue 30: ≤ 2% over ours).
 */
import { openTelemetry } from '@kyb-webhooks/opentelemetry';
import { createBenchReceiver } from '../receiver.js';
import type { Answer, ProgramSetup } from './protocol.js';

export function create(setup: ProgramSetup): Answer {
  const receiver = createBenchReceiver(setup, undefined, undefined, openTelemetry());
  return async (delivery) =>
    (await receiver.receive({ method: 'POST', headers: delivery.headers, body: delivery.body })).status;
}
