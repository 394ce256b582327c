import { answerCode, describeDeliveryFailure } from '../answer.js';
import type { TestEnvelope } from '../fixtures.js';
import { signatureHeader } from '../hmac.js';

/**
 * The real service's retry schedule (spec §6 rule 2, §8): 10 attempts, waits of 1, 2, 4 … 256 minutes between
 * them, about 8.5 hours in all. The service's `timeScale` option compresses it for tests.
 *
 * @example
 * ```ts
 * const service = await startKybService({ retry: { ...REAL_RETRY_SCHEDULE, maxAttempts: 3 }, timeScale: 1e-5 })
 * ```
 */
export const REAL_RETRY_SCHEDULE = {
  maxAttempts: 10,
  baseDelayMs: 60_000,
  factor: 2,
  maxDelayMs: 256 * 60_000,
} as const;

/**
 * One delivery attempt of the local service, as it records it.
 *
 * @example
 * ```ts
 * expect(service.attempts().map((a) => [a.seq, a.status])).toEqual([[0, 500], [0, 200], [1, 200]])
 * ```
 */
export interface ServiceDeliveryAttempt {
  eventId: string;
  event: string;
  streamId: string;
  seq: number;
  /** Service-Delivery-Attempt: 1-based per event; keeps counting across quarantine and redelivery. */
  attempt: number;
  /** Unix milliseconds when the POST started. */
  attemptedAt: number;
  /** The HTTP status the endpoint answered, or null when no answer came (network error, timeout). */
  status: number | null;
  /** Why no answer came (`timeout`, `network error (ECONNREFUSED)`), or `redirect not followed`. */
  error?: string;
  /**
   * The `code` of the endpoint's JSON answer when it had one (a receiver answers e.g. `duplicate` or
   * `handler_failed`): what the merchant host returned (spec 4.2), without keeping its body.
   */
  responseCode?: string;
  durationMs: number;
  /** The secret version (kv) the attempt was signed with. */
  secretVersion: string;
}

/** The endpoint the merchant registered: URL and versioned secrets (the highest version signs unless named). */
export interface EndpointConfig {
  url: string;
  secrets: Record<string, string>;
  currentVersion: string;
}

export interface DeliveryEngineOptions {
  /** Multiplies every retry wait: 1 is real time (about 9 hours), 1e-5 makes the whole schedule about 0.3 s. */
  timeScale: number;
  maxAttempts: number;
  baseDelayMs: number;
  factor: number;
  maxDelayMs: number;
  /** Consecutive failed attempts (endpoint-wide, any stream) after which the endpoint is quarantined. */
  quarantineAfter: number;
  /** Per attempt; not scaled. */
  timeoutMs: number;
  fetch: typeof fetch;
  now: () => number;
}

interface QueuedDelivery {
  envelope: TestEnvelope;
  /** Failed attempts since this delivery was queued or its endpoint reactivated: the retry budget used. */
  failures: number;
}

interface StreamQueue {
  items: QueuedDelivery[];
  running: boolean;
}

/**
 * Delivers events like the service (spec 4.3, §6): per stream in queue order, seq N+1 only after N got a 2xx or
 * exhausted its retries; exponential retries; redirects never followed; quarantine after repeated failures with the
 * backlog kept (nothing is dropped) until {@link DeliveryEngine.reactivate}.
 */
export interface DeliveryEngine {
  enqueue(envelope: TestEnvelope): void;
  setEndpoint(endpoint: EndpointConfig | undefined): void;
  readonly endpoint: EndpointConfig | undefined;
  readonly quarantined: boolean;
  reactivate(): boolean;
  readonly attempts: readonly ServiceDeliveryAttempt[];
  /** Events given up on after every attempt failed, in the order that happened. */
  readonly exhausted: readonly TestEnvelope[];
  /** Deliveries waiting (quarantined, no endpoint, or in progress), per stream. */
  pending(streamId?: string): number;
  idle(): Promise<void>;
  delayBefore(attempt: number): number;
  stop(): void;
}

const NO_RESPONSE_STATUS = null;

export function createDeliveryEngine(options: DeliveryEngineOptions): DeliveryEngine {
  const streams = new Map<string, StreamQueue>();
  const attempts: ServiceDeliveryAttempt[] = [];
  const exhausted: TestEnvelope[] = [];
  const attemptCounts = new Map<string, number>();
  const sleepers = new Set<{ timer: ReturnType<typeof setTimeout>; resolve: () => void }>();
  let endpoint: EndpointConfig | undefined;
  let quarantined = false;
  let consecutiveFailures = 0;
  let stopped = false;
  // Aborts attempts in flight on stop(), so a hanging endpoint cannot outlive the service.
  const stopping = new AbortController();

  function delayBefore(attempt: number): number {
    const real = Math.min(options.baseDelayMs * options.factor ** Math.max(0, attempt - 2), options.maxDelayMs);
    return real * options.timeScale;
  }

  function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const sleeper = {
        timer: setTimeout(() => {
          sleepers.delete(sleeper);
          resolve();
        }, ms),
        resolve,
      };
      sleepers.add(sleeper);
    });
  }

  function canDeliver(): boolean {
    return endpoint !== undefined && !quarantined && !stopped;
  }

  function pump(): void {
    if (!canDeliver()) return;
    for (const queue of streams.values()) {
      if (!queue.running && queue.items.length > 0) void run(queue);
    }
  }

  async function run(queue: StreamQueue): Promise<void> {
    queue.running = true;
    try {
      while (queue.items.length > 0 && canDeliver()) {
        const item = queue.items[0] as QueuedDelivery;
        const ok = await attempt(item.envelope, endpoint as EndpointConfig);
        if (stopped) return;
        if (ok) {
          consecutiveFailures = 0;
          queue.items.shift();
          continue;
        }
        item.failures += 1;
        consecutiveFailures += 1;
        if (consecutiveFailures >= options.quarantineAfter) quarantined = true;
        // Quarantine first: the event whose failure started it, or failed during it, stays queued in its place with
        // the rest of the backlog (spec 6 rule 4: none is dropped), and reactivate gives it a fresh retry budget.
        if (quarantined) break;
        if (item.failures >= options.maxAttempts) {
          // Exhausted: the stream moves on (spec 3), the event stays retrievable through the events API.
          queue.items.shift();
          exhausted.push(item.envelope);
          continue;
        }
        await sleep(delayBefore(item.failures + 1));
      }
    } finally {
      queue.running = false;
    }
  }

  async function attempt(envelope: TestEnvelope, target: EndpointConfig): Promise<boolean> {
    const number = (attemptCounts.get(envelope.event_id) ?? 0) + 1;
    attemptCounts.set(envelope.event_id, number);
    const body = new TextEncoder().encode(JSON.stringify(envelope));
    const version = target.currentVersion;
    const secret = target.secrets[version] as string;
    const attemptedAt = options.now();
    const started = performance.now();
    const record: ServiceDeliveryAttempt = {
      eventId: envelope.event_id,
      event: envelope.event,
      streamId: envelope.stream_id,
      seq: envelope.seq,
      attempt: number,
      attemptedAt,
      status: NO_RESPONSE_STATUS,
      durationMs: 0,
      secretVersion: version,
    };
    // A timer and a controller of our own rather than AbortSignal.any([AbortSignal.timeout(…), …]): on Node 20 the
    // timeout signal inside a composite can be garbage-collected before it fires, and the attempt then never ends
    // (seen as a 20 s test timeout under load).
    const attemptAbort = new AbortController();
    const timer = setTimeout(
      () => attemptAbort.abort(new DOMException('The delivery attempt timed out.', 'TimeoutError')),
      options.timeoutMs,
    );
    const onStop = () => attemptAbort.abort(stopping.signal.reason);
    stopping.signal.addEventListener('abort', onStop, { once: true });
    try {
      const response = await options.fetch(target.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'service-kyb-signature': signatureHeader(body, {
            timestamp: Math.floor(attemptedAt / 1000),
            version,
            secret,
          }),
          'service-event-id': envelope.event_id,
          'service-delivery-attempt': String(number),
          'service-kyb-api-version': envelope.api_version,
          'user-agent': 'service-kyb-webhooks/1',
        },
        body,
        // Spec 4.3: redirects are never followed; a 3xx is a failed attempt like any other non-2xx.
        redirect: 'manual',
        signal: attemptAbort.signal,
      });
      const answer = await response.arrayBuffer().catch(() => undefined);
      record.status = response.status;
      const code = answer === undefined ? undefined : answerCode(answer);
      if (code !== undefined) record.responseCode = code;
      if (response.status >= 300 && response.status < 400) record.error = 'redirect not followed';
    } catch (error) {
      record.error = describeDeliveryFailure(error);
    } finally {
      clearTimeout(timer);
      stopping.signal.removeEventListener('abort', onStop);
    }
    record.durationMs = performance.now() - started;
    attempts.push(record);
    return record.status !== null && record.status >= 200 && record.status < 300;
  }

  return {
    get endpoint() {
      return endpoint;
    },
    get quarantined() {
      return quarantined;
    },
    get attempts() {
      return attempts;
    },
    get exhausted() {
      return exhausted;
    },
    delayBefore,

    enqueue(envelope) {
      let queue = streams.get(envelope.stream_id);
      if (!queue) streams.set(envelope.stream_id, (queue = { items: [], running: false }));
      queue.items.push({ envelope, failures: 0 });
      pump();
    },

    setEndpoint(next) {
      endpoint = next;
      pump();
    },

    reactivate() {
      const was = quarantined;
      quarantined = false;
      consecutiveFailures = 0;
      // A fresh retry budget for the events that were held: the quarantine, not the event, was the problem.
      for (const queue of streams.values()) for (const item of queue.items) item.failures = 0;
      pump();
      return was;
    },

    pending(streamId) {
      if (streamId !== undefined) return streams.get(streamId)?.items.length ?? 0;
      let total = 0;
      for (const queue of streams.values()) total += queue.items.length;
      return total;
    },

    async idle() {
      for (;;) {
        const busy = [...streams.values()].some((queue) => queue.running || (queue.items.length > 0 && canDeliver()));
        if (!busy) return;
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    },

    stop() {
      stopped = true;
      stopping.abort();
      for (const sleeper of sleepers) {
        clearTimeout(sleeper.timer);
        sleeper.resolve();
      }
      sleepers.clear();
    },
  };
}
