/**
 * diagnostics_channel as a subscriber (an APM) finds it, for the core's channel tests (other packages may not import
 * the core by a relative path, so the client keeps its own lookup): looked up through process.getBuiltinModule, as
 * the core does, so the same tests run on Node, Bun and Deno; `undefined` where the runtime has none (workerd without
 * nodejs_compat), and the tests that need it are skipped there.
 */

/** The events of a tracing channel a subscriber can handle. */
export type TracePhase = 'start' | 'end' | 'asyncStart' | 'asyncEnd' | 'error';

/** What the tests use of a `TracingChannel`. */
export interface TracingChannelLike {
  subscribe(handlers: Partial<Record<TracePhase, (message: unknown) => void>>): void;
  unsubscribe(handlers: Partial<Record<TracePhase, (message: unknown) => void>>): void;
}

/** What the tests use of a plain `Channel`. */
export interface ChannelLike {
  subscribe(onMessage: (message: unknown) => void): void;
  unsubscribe(onMessage: (message: unknown) => void): void;
}

/** The runtime's diagnostics_channel, or `undefined` where it has none. */
export const diagnostics = (
  globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }
).process?.getBuiltinModule?.('diagnostics_channel') as
  { tracingChannel(name: string): TracingChannelLike; channel(name: string): ChannelLike } | undefined;
