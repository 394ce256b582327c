/**
 * Ours with a subscriber on the `kyb-webhooks:receive` tracing channel (no-op handlers): what an APM listening on
 * `node:diagnostics_channel` costs each delivery, without any `telemetry` option.
 */
import diagnostics from 'node:diagnostics_channel';
import { TRACING_CHANNELS } from '@kyb-webhooks/core';
import { createBenchReceiver } from '../receiver.js';
import type { Answer, ProgramSetup } from './protocol.js';

export function create(setup: ProgramSetup): Answer {
  const noop = (): void => {};
  diagnostics
    .tracingChannel(TRACING_CHANNELS.receive)
    .subscribe({ start: noop, end: noop, asyncStart: noop, asyncEnd: noop, error: noop });
  const receiver = createBenchReceiver(setup);
  return async (delivery) =>
    (await receiver.receive({ method: 'POST', headers: delivery.headers, body: delivery.body })).status;
}
