/** What the bench parent and its HTTP server processes agree on. */
import type { ReceiverConfig } from '../receiver.js';

export const FRAMEWORKS = ['express', 'fastify', 'koa', 'hono'] as const;
export type Framework = (typeof FRAMEWORKS)[number];

/**
 * (a) read the raw body and answer 200; (b) the same plus a node:crypto HMAC check; (c) our adapter, as a user
 * sets it up (default memory store), for HMAC-only events; (c) our adapter for attested events, whose pre-signed
 * pool is cycled (see `perRequestKeyStore`).
 */
export const VARIANTS = ['bare', 'hmac', 'adapter', 'adapter-attested'] as const;
export type Variant = (typeof VARIANTS)[number];

export const WEBHOOK_PATH = '/webhooks/kyb';

/** Passed to the server in the `KYB_BENCH_SERVER` environment variable (JSON). */
export interface ServerConfig extends ReceiverConfig {
  path: string;
}

export type ParentMessage = { type: 'cpu'; id: number };
export type ServerMessage =
  | { type: 'ready'; port: number }
  | { type: 'error'; message: string }
  | { type: 'cpu'; id: number; user: number; system: number };
