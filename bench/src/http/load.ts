/** One load run against one server: autocannon in this process, server CPU from the server's own counters. */
import { setTimeout as sleep } from 'node:timers/promises';
import { ulid, type SignedDelivery, type TestSigner } from '@kyb-webhooks/testing';
import autocannon, { type AutocannonRequest } from 'autocannon';
import type { ServerHandle } from './child.js';
import { STRIPE_HEADER } from './protocol.js';
import { stripeHeaderFor } from './stripe-header.js';

export interface LoadOptions {
  durationS: number;
  connections: number;
  /** Stop after this many requests instead of after `durationS` (warm-ups of the quick run). */
  amount?: number;
}

export interface LoadResult {
  requestsPerSecond: number;
  /** Server CPU (user + system) over the run divided by the requests completed. */
  cpuMicrosPerRequest: number;
  completed: number;
}

/**
 * The delivery's headers plus a Stripe-format signature of the same bytes with the same secret: every endpoint
 * gets the very same requests, and each reads the header of its own scheme.
 */
export function withStripeHeader(headers: Record<string, string>): Record<string, string> {
  return { ...headers, [STRIPE_HEADER]: stripeHeaderFor(headers['service-kyb-signature']!) };
}

/** Pre-built requests cycled by every connection (autocannon builds each one once). */
export function toRequests(pool: readonly SignedDelivery[], path: string): AutocannonRequest[] {
  return pool.map((delivery) => ({
    method: 'POST',
    path,
    headers: withStripeHeader(delivery.headers),
    body: Buffer.from(delivery.body.buffer, delivery.body.byteOffset, delivery.body.byteLength),
  }));
}

/**
 * One request template whose every use is a new event: autocannon's `setupRequest` puts a fresh ULID in
 * `event_id` (body and Service-Event-Id) and signs the new bytes with the test kit, so a server with a real dedupe
 * store does the whole claim-and-complete on every request, as in production. Costs the load generator a few µs
 * per request, not the server.
 */
export function freshHmacRequests(
  template: SignedDelivery,
  signer: TestSigner,
  path: string,
  nowMs: number,
): AutocannonRequest[] {
  const eventId = template.envelope.event_id;
  const parts = template.text.split(eventId);
  if (parts.length !== 2)
    throw new Error(`the template must carry its event_id exactly once, found ${parts.length - 1}`);
  const [before, after] = parts as [string, string];
  return [
    {
      method: 'POST',
      path,
      headers: template.headers,
      setupRequest(request) {
        const id = ulid(nowMs);
        const body = before + id + after;
        const headers = withStripeHeader({
          ...template.headers,
          'service-event-id': id,
          'service-kyb-signature': signer.hmacHeader(body),
        });
        return { ...request, body, headers };
      },
    },
  ];
}

export async function runLoad(
  server: ServerHandle,
  requests: AutocannonRequest[],
  options: LoadOptions,
): Promise<LoadResult> {
  const before = await server.cpuMicros();
  const result = await autocannon({
    url: `http://127.0.0.1:${server.port}`,
    connections: options.connections,
    duration: options.durationS,
    ...(options.amount === undefined ? {} : { amount: options.amount }),
    requests,
  });
  // Let the requests still in flight when autocannon stopped finish, so their CPU is not left out... or counted
  // for the next run.
  await sleep(50);
  const after = await server.cpuMicros();
  const completed = result.requests.total;
  if (result.errors > 0 || result.non2xx > 0 || result.timeouts > 0 || completed === 0) {
    const codes = Object.entries(result.statusCodeStats)
      .map(([code, { count }]) => `${code}×${count}`)
      .join(', ');
    throw new Error(
      `${server.framework} ${server.variant} #${server.replica}: ${completed} completed, ${result.errors} errors, ${result.timeouts} timeouts, status ${codes}`,
    );
  }
  return {
    requestsPerSecond: completed / result.duration,
    cpuMicrosPerRequest: (after - before) / completed,
    completed,
  };
}
