/*
 * The real OpenTelemetry SDK for the tests: a tracer provider exporting to memory, a meter provider read on demand,
 * and the async-hooks context manager (what a Node service registers), so spans nest as they would in production.
 */
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import type { Attributes } from '@opentelemetry/api';
import {
  MeterProvider,
  MetricReader,
  type DataPoint,
  type Histogram,
  type MetricData,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';

/** A metric reader the test collects from when it wants (no export interval). */
class OnDemandReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

export function asyncContextManager(): AsyncLocalStorageContextManager {
  return new AsyncLocalStorageContextManager().enable();
}

export interface SdkRig {
  tracerProvider: BasicTracerProvider;
  meterProvider: MeterProvider;
  spans(): ReadableSpan[];
  metrics(): Promise<MetricData[]>;
  /** The instrumentation scopes the collected metrics came from. */
  scopes(): Promise<{ name: string; version?: string }[]>;
  reset(): void;
  shutdown(): Promise<void>;
}

export function sdkRig(): SdkRig {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const reader = new OnDemandReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  return {
    tracerProvider,
    meterProvider,
    spans: () => exporter.getFinishedSpans(),
    async metrics() {
      const { resourceMetrics, errors } = await reader.collect();
      if (errors.length > 0) throw new Error(`metric collection failed: ${errors.join('; ')}`);
      return resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics);
    },
    async scopes() {
      const { resourceMetrics } = await reader.collect();
      return resourceMetrics.scopeMetrics.map(({ scope }) => ({ name: scope.name, version: scope.version }));
    },
    reset: () => exporter.reset(),
    async shutdown() {
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
    },
  };
}

/** A span as a user reads it in a trace view: name, kind, attributes, status, its events, and its children. */
export interface SpanNode {
  name: string;
  kind: number;
  attributes: Attributes;
  status: { code: number; message?: string };
  events: { name: string; attributes?: Attributes }[];
  children: SpanNode[];
}

/** The finished spans as trees (roots are spans whose parent is not among them), children in start order. */
export function spanTrees(spans: readonly ReadableSpan[]): SpanNode[] {
  const byStart = [...spans].sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
  const ids = new Set(byStart.map((span) => span.spanContext().spanId));
  const nodeOf = (span: ReadableSpan): SpanNode => ({
    name: span.name,
    kind: span.kind,
    attributes: { ...span.attributes },
    status: span.status,
    events: span.events.map((event) => ({ name: event.name, attributes: event.attributes })),
    children: byStart.filter((child) => child.parentSpanContext?.spanId === span.spanContext().spanId).map(nodeOf),
  });
  return byStart
    .filter((span) => span.parentSpanContext === undefined || !ids.has(span.parentSpanContext.spanId))
    .map(nodeOf);
}

/** A tree's shape: each span's name with its children's, for a one-line comparison. */
export function shapeOf(node: SpanNode): unknown {
  return node.children.length === 0 ? node.name : { [node.name]: node.children.map(shapeOf) };
}

/** The data points of one metric, by name. */
export function pointsOf<T = number>(metrics: readonly MetricData[], name: string): DataPoint<T>[] {
  return (metrics.find((metric) => metric.descriptor.name === name)?.dataPoints ?? []) as DataPoint<T>[];
}

/** The histogram data points of one metric as `{ attributes, count, sum }`. */
export function histogramOf(metrics: readonly MetricData[], name: string) {
  return pointsOf<Histogram>(metrics, name).map((point) => ({
    attributes: point.attributes,
    count: point.value.count,
    sum: point.value.sum,
  }));
}

/** The counter data points of one metric as `{ attributes, value }`. */
export function counterOf(metrics: readonly MetricData[], name: string) {
  return pointsOf(metrics, name).map((point) => ({ attributes: point.attributes, value: point.value }));
}
