import { createTestSender, type TestEnvelope } from '@kyb-webhooks/testing';
import type { DevSigner } from './dev-signer.js';

/**
 * What was sent and what came back. `status` is null when no HTTP answer came (`error` says why: `timeout` or
 * `network error (ECONNREFUSED)`); `code` is the answer's `error.code` or `code`.
 *
 * @example
 * ```ts
 * const sent = await post({ envelope, headers, body })
 * if (sent.status === 401) console.log(sent.code) // 'signature_mismatch'
 * ```
 */
export interface SentDelivery {
  envelope: TestEnvelope;
  headers: Record<string, string>;
  body: Uint8Array;
  status: number | null;
  code?: string;
  error?: string;
}

/**
 * Posts exact bytes and headers to `url` through the test kit's sender (no retry, redirects not followed, any 2xx
 * accepted), so what the CLI reports is what the service's delivery would have seen.
 *
 * @example
 * ```ts
 * const post = createPoster('http://127.0.0.1:3000/webhooks/kyb', signer, 10_000)
 * const sent = await post(await signer.sign(envelope))
 * ```
 */
export function createPoster(url: string, signer: DevSigner, timeoutMs: number) {
  const sender = createTestSender({ url, signer: signer.kit, timeoutMs, retry: { maxAttempts: 1 } });
  return async function post(delivery: {
    envelope: TestEnvelope;
    headers: Record<string, string>;
    body: Uint8Array;
  }): Promise<SentDelivery> {
    // fetch refuses some requests before any connection (a header name or value it rejects) with the same TypeError
    // as a network failure; building the request first tells the two apart, so "is your server running?" is not
    // asked about a request that never left.
    try {
      new Request(url, { method: 'POST', headers: delivery.headers });
    } catch {
      return {
        ...delivery,
        status: null,
        error: `${NOT_SENT}: fetch refuses its URL or one of its headers (a header name that is not an HTTP token, or a value with a line break); fix the headers of the capture`,
      };
    }
    // The kit signs afresh; every one of its headers is replaced by ours and the body by our bytes, so exactly what
    // we hold goes out. attest: false spares it an RSA signature we would throw away.
    const overrides: Record<string, string | undefined> = Object.fromEntries(
      KIT_HEADERS.map((name) => [name, undefined]),
    );
    Object.assign(overrides, delivery.headers);
    const attemptHeader = Number(delivery.headers['service-delivery-attempt']);
    const attempt = await sender.deliverOnce(delivery.envelope, {
      attest: false,
      headers: overrides,
      body: delivery.body,
      attempt: Number.isInteger(attemptHeader) && attemptHeader > 0 ? attemptHeader : 1,
    });
    const sent: SentDelivery = {
      envelope: delivery.envelope,
      headers: delivery.headers,
      body: delivery.body,
      status: attempt.status,
    };
    if (attempt.code !== undefined) sent.code = attempt.code;
    if (attempt.error !== undefined) sent.error = attempt.error;
    return sent;
  };
}

/**
 * How {@link SentDelivery.error} starts when the request was refused before it was sent.
 *
 * @example
 * ```ts
 * if (sent.error?.startsWith(NOT_SENT)) console.log('nothing reached the server')
 * ```
 */
export const NOT_SENT = 'not sent';

/** The function {@link createPoster} returns. */
export type Post = ReturnType<typeof createPoster>;

const KIT_HEADERS = [
  'content-type',
  'service-kyb-signature',
  'service-event-id',
  'service-delivery-attempt',
  'service-kyb-api-version',
  'user-agent',
];
