import type { Receiver } from '@kyb-webhooks/core';
import type { Variant } from '../protocol.js';

/** Everything an app needs to serve one variant on 127.0.0.1. */
export interface AppContext {
  variant: Variant;
  path: string;
  /** Endpoint (b)'s node:crypto check. */
  checkHmac: (header: string | undefined, body: Uint8Array) => boolean;
  /** Endpoint (c)'s receiver (memory store, no-op handlers). */
  receiver: () => Receiver;
}

/** Starts the app on a free loopback port and returns the port. */
export type StartApp = (context: AppContext) => Promise<number>;

export const OK_BODY = { received: true } as const;
export const UNAUTHORIZED_BODY = { error: { code: 'signature_mismatch', message: 'bad signature' } } as const;

export function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}
