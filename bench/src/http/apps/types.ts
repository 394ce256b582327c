import type { Receiver } from '@kyb-webhooks/core';
import type { ManualStatus } from '../baseline.js';

/**
 * What one server serves: our adapter around a receiver, or a manual endpoint (hand-written or Stripe's
 * constructEvent) that gets the framework's raw body and the value of its signature header and says what to answer.
 */
export type Endpoint =
  | { kind: 'adapter'; receiver: Receiver }
  | {
      kind: 'manual';
      header: string;
      answer: (header: string | undefined, body: Buffer) => ManualStatus;
      /** Stripe's endpoint, written as Stripe's docs show it (in Express: express.raw() on the route). */
      peer: boolean;
    };

/** Everything an app needs to serve one endpoint on 127.0.0.1. */
export interface AppContext {
  path: string;
  endpoint: Endpoint;
}

/** Starts the app on a free loopback port and returns the port. */
export type StartApp = (context: AppContext) => Promise<number>;

/** Raw body cap of the manual endpoints: 1 MiB, our default (a careful receiver caps what it buffers). */
export const BODY_LIMIT_BYTES = 1024 * 1024;

export const OK_BODY = { received: true } as const;
const ERROR_BODIES = {
  400: { error: { code: 'body_not_json', message: 'bad body' } },
  401: { error: { code: 'signature_mismatch', message: 'bad signature' } },
} as const;

export function answerBody(status: ManualStatus): object {
  return status === 200 ? OK_BODY : ERROR_BODIES[status];
}

export function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}
