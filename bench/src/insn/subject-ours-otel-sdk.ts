/**
 * Ours with `telemetry: openTelemetry({ tracerProvider, meterProvider })` on the real SDK: a `BasicTracerProvider`
 * whose `SimpleSpanProcessor` hands every ended span to an exporter that drops it, and a `MeterProvider` with a
 * reader that is never collected (the instruments record, nothing is exported). No context manager is
 * registered, as the layer is given its providers directly: `context.with` is the API's no-op one.
 */
import { openTelemetry } from '@kyb-webhooks/opentelemetry';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { createBenchReceiver } from '../receiver.js';
import type { Answer, ProgramSetup } from './protocol.js';

/** Accepts every batch and keeps nothing (0 is `ExportResultCode.SUCCESS`). */
const dropping: SpanExporter = {
  export: (_spans, done) => done({ code: 0 }),
  shutdown: async () => {},
};

/** A metric reader nobody collects from: no export interval, nothing exported. */
class UncollectedReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

export function create(setup: ProgramSetup): Answer {
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(dropping)] });
  const meterProvider = new MeterProvider({ readers: [new UncollectedReader()] });
  const receiver = createBenchReceiver(setup, undefined, undefined, openTelemetry({ tracerProvider, meterProvider }));
  return async (delivery) =>
    (await receiver.receive({ method: 'POST', headers: delivery.headers, body: delivery.body })).status;
}
