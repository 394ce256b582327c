import { answerCode, describeDeliveryFailure } from './answer.js';
import type { TestEnvelope } from './fixtures.js';
import type { SignOptions, TestSigner } from './signer.js';

/**
 * The retry schedule: the wait before attempt n (n ≥ 2) is `min(baseDelayMs * factor^(n-2), maxDelayMs)`. The
 * service stretches this over about 9 hours (spec §8); tests compress it to milliseconds.
 *
 * @example
 * ```ts
 * const retry: RetryOptions = { maxAttempts: 3, baseDelayMs: 10 }
 * ```
 */
export interface RetryOptions {
  /** Attempts in all, the first included; default 8. */
  maxAttempts?: number;
  /** Wait before the second attempt; default 50. */
  baseDelayMs?: number;
  /** Growth of the wait per attempt; default 2. */
  factor?: number;
  /** Upper bound of one wait; default 1000. */
  maxDelayMs?: number;
}

/**
 * Options of {@link createTestSender}.
 *
 * @example
 * ```ts
 * const options: TestSenderOptions = { url: `${origin}/webhooks/kyb`, signer, retry: { maxAttempts: 3 }, timeoutMs: 500 }
 * ```
 */
export interface TestSenderOptions {
  /** The merchant endpoint. Unlike the service, loopback is allowed: that is where tests listen. */
  url: string;
  signer: TestSigner;
  retry?: RetryOptions;
  /** Per attempt, covering connect, response and body; default 2000. */
  timeoutMs?: number;
  /** Default the global fetch. */
  fetch?: typeof fetch;
  /** Applied to every attempt, e.g. `{ version: '2' }` after a rotation; `t` and the attempt number stay fresh. */
  signOptions?: Omit<SignOptions, 'attempt' | 'timestamp'>;
}

/**
 * One POST and what the endpoint answered. `status` is null when no HTTP response came (network error, timeout);
 * `code` is the JSON body's `error.code` or `code`, when there is one.
 *
 * @example
 * ```ts
 * expect(record.attempts.map((a) => a.status)).toEqual([500, 500, 200])
 * ```
 */
export interface DeliveryAttempt {
  eventId: string;
  streamId: string;
  seq: number;
  /** 1-based, as sent in Service-Delivery-Attempt. */
  attempt: number;
  status: number | null;
  code?: string;
  /** Response body text, at most 64 KiB of it. */
  body: string;
  headers: Record<string, string>;
  /** Unix milliseconds when the request started. */
  startedAt: number;
  durationMs: number;
  /** Why no HTTP response came: `timeout` or `network error (<code>)`. */
  error?: string;
}

/**
 * The outcome of one event: delivered once a 2xx came back, otherwise after every attempt failed.
 *
 * @example
 * ```ts
 * const record = await sender.send(envelope)
 * expect(record).toMatchObject({ delivered: true })
 * ```
 */
export interface DeliveryRecord {
  eventId: string;
  streamId: string;
  seq: number;
  delivered: boolean;
  attempts: DeliveryAttempt[];
}

/**
 * Options of {@link TestSender.deliverOnce}: signer options (a forged secret, a stale `t`, a bad attestation) plus
 * raw changes applied after signing.
 *
 * @example
 * ```ts
 * await sender.deliverOnce(envelope, { headers: { 'service-kyb-signature': undefined } }) // no signature
 * await sender.deliverOnce(envelope, { body: tamperedText })                            // MAC of other bytes
 * ```
 */
export interface DeliverOnceOptions extends SignOptions {
  /** Header overrides; `undefined` removes a header. */
  headers?: Record<string, string | undefined>;
  /** Bytes sent instead of the signed ones; the signature header still covers the original body. */
  body?: string | Uint8Array;
}

/**
 * Delivers envelopes like the service does (spec 4.3, §6): signs every attempt afresh, treats any 2xx as accepted
 * and anything else (other status, redirect, network error, timeout) as a failure to retry on an exponential
 * schedule, never follows redirects, and delivers each stream in order.
 *
 * @example
 * ```ts
 * const sender = createTestSender({ url, signer })
 * const record = await sender.send(testEvents.dataRequestRefused())
 * ```
 */
export interface TestSender {
  /**
   * Deliver one event with retries. Per stream_id, events go out in the order `send` was called: each waits until
   * the one before it succeeded or exhausted its retries (call in seq order, or use {@link TestSender.sendAll}).
   */
  send(envelope: TestEnvelope): Promise<DeliveryRecord>;
  /** Deliver many at once: streams run concurrently, each stream in seq order. Records come back in input order. */
  sendAll(envelopes: readonly TestEnvelope[]): Promise<DeliveryRecord[]>;
  /** One raw attempt without retry or queueing, for forged and malformed deliveries. Not added to `attempts`. */
  deliverOnce(envelope: TestEnvelope, options?: DeliverOnceOptions): Promise<DeliveryAttempt>;
  /** Every attempt made by `send`/`sendAll`, in the order they completed. */
  readonly attempts: readonly DeliveryAttempt[];
  /** The wait before attempt `attempt` (≥ 2) under this sender's schedule. */
  delayBefore(attempt: number): number;
}

const MAX_BODY_CHARS = 64 * 1024;

/**
 * Creates a {@link TestSender}.
 *
 * @example
 * ```ts
 * const sender = createTestSender({ url: `${origin}/webhooks/kyb`, signer, retry: { maxAttempts: 3, baseDelayMs: 20 } })
 * const [first, second] = await sender.sendAll(testStream(2))
 * expect(sender.attempts.map((a) => a.seq)).toEqual([0, 1])
 * ```
 */
export function createTestSender(options: TestSenderOptions): TestSender {
  const maxAttempts = options.retry?.maxAttempts ?? 8;
  const baseDelayMs = options.retry?.baseDelayMs ?? 50;
  const factor = options.retry?.factor ?? 2;
  const maxDelayMs = options.retry?.maxDelayMs ?? 1000;
  const timeoutMs = options.timeoutMs ?? 2000;
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const { signer } = options;
  const attempts: DeliveryAttempt[] = [];
  // The tail of each stream's queue: the next event of the stream starts when it settles.
  const streamTails = new Map<string, Promise<unknown>>();

  function delayBefore(attempt: number): number {
    return Math.min(baseDelayMs * factor ** Math.max(0, attempt - 2), maxDelayMs);
  }

  async function post(
    envelope: TestEnvelope,
    headers: Record<string, string>,
    body: Uint8Array<ArrayBuffer>,
    attempt: number,
  ) {
    const startedAt = Date.now();
    const started = performance.now();
    const base = { eventId: envelope.event_id, streamId: envelope.stream_id, seq: envelope.seq, attempt, startedAt };
    try {
      const response = await fetchImpl(options.url, {
        method: 'POST',
        headers,
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(timeoutMs),
      });
      const text = (await response.text()).slice(0, MAX_BODY_CHARS);
      const code = answerCode(new TextEncoder().encode(text));
      const responseHeaders: Record<string, string> = {};
      response.headers.forEach((value, name) => {
        responseHeaders[name] = value;
      });
      const result: DeliveryAttempt = {
        ...base,
        status: response.status,
        body: text,
        headers: responseHeaders,
        durationMs: performance.now() - started,
      };
      if (code !== undefined) result.code = code;
      return result;
    } catch (error) {
      return {
        ...base,
        status: null,
        body: '',
        headers: {},
        durationMs: performance.now() - started,
        error: describeDeliveryFailure(error),
      };
    }
  }

  async function deliverWithRetries(envelope: TestEnvelope): Promise<DeliveryRecord> {
    // Attest once: the service keeps one attestation per event and re-signs only the HMAC header on retries.
    const carried = await signer.withAttestation(envelope, options.signOptions);
    const record: DeliveryRecord = {
      eventId: envelope.event_id,
      streamId: envelope.stream_id,
      seq: envelope.seq,
      delivered: false,
      attempts: [],
    };
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      if (attempt > 1) await sleep(delayBefore(attempt));
      const { headers, body } = await signer.sign(carried, { ...options.signOptions, attempt });
      const result = await post(carried, headers, body, attempt);
      attempts.push(result);
      record.attempts.push(result);
      if (result.status !== null && result.status >= 200 && result.status < 300) {
        record.delivered = true;
        break;
      }
    }
    return record;
  }

  function send(envelope: TestEnvelope): Promise<DeliveryRecord> {
    const previous = streamTails.get(envelope.stream_id) ?? Promise.resolve();
    const delivery = previous.then(() => deliverWithRetries(envelope));
    // A failed delivery (exhausted retries, or a throw) must not block the rest of the stream forever.
    const tail = delivery.catch(() => undefined);
    streamTails.set(envelope.stream_id, tail);
    void tail.then(() => {
      if (streamTails.get(envelope.stream_id) === tail) streamTails.delete(envelope.stream_id);
    });
    return delivery;
  }

  return {
    send,
    delayBefore,
    get attempts() {
      return attempts;
    },

    sendAll(envelopes) {
      const bySeq = envelopes
        .map((envelope, index) => ({ envelope, index }))
        .sort((a, b) => a.envelope.seq - b.envelope.seq);
      const records: Promise<DeliveryRecord>[] = new Array(envelopes.length);
      // Queueing in seq order is enough: send() chains each stream's events in the order it is called.
      for (const { envelope, index } of bySeq) records[index] = send(envelope);
      return Promise.all(records);
    },

    async deliverOnce(envelope, onceOptions = {}) {
      const { headers: overrides, body: replacement, ...signOptions } = onceOptions;
      const signed = await signer.sign(envelope, signOptions);
      const headers: Record<string, string> = { ...signed.headers };
      for (const [name, value] of Object.entries(overrides ?? {})) {
        delete headers[name.toLowerCase()];
        if (value !== undefined) headers[name.toLowerCase()] = value;
      }
      const body =
        replacement === undefined
          ? signed.body
          : typeof replacement === 'string'
            ? new TextEncoder().encode(replacement)
            : new Uint8Array(replacement);
      return post(signed.envelope, headers, body, signOptions.attempt ?? 1);
    },
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
