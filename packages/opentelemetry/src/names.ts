/*
 * The names this package records under: OpenTelemetry semantic-convention attributes where one fits (messaging,
 * CloudEvents, HTTP, error.type), `kyb.webhook.*` for what the conventions have no name for. Kept in one place so the
 * README's table, the tests and the code agree.
 */

/**
 * The span and metric attributes, by key.
 *
 * @example
 * ```ts
 * // the failed deliveries among finished spans (e.g. from an InMemorySpanExporter)
 * const failed = spans.filter((span) => span.attributes[ATTRIBUTES.errorType] !== undefined)
 * ```
 */
export const ATTRIBUTES = Object.freeze({
  messagingSystem: 'messaging.system',
  messagingOperationType: 'messaging.operation.type',
  messagingOperationName: 'messaging.operation.name',
  messagingMessageId: 'messaging.message.id',
  /** Queue mode, on a job's span and metrics: the queue's name (`memory queue`, `pg-boss queue`, `BullMQ queue`). */
  messagingDestinationName: 'messaging.destination.name',
  cloudEventsEventId: 'cloudevents.event_id',
  cloudEventsEventType: 'cloudevents.event_type',
  cloudEventsEventSubject: 'cloudevents.event_subject',
  httpRequestMethod: 'http.request.method',
  httpResponseStatusCode: 'http.response.status_code',
  errorType: 'error.type',
  /** `Service-Delivery-Attempt` (1 for the first delivery); the conventions name one only for Pub/Sub. */
  deliveryAttempt: 'kyb.webhook.delivery_attempt',
  /** The stream's sequence number of the event. */
  seq: 'kyb.webhook.seq',
  /** The envelope's `api_version`. */
  apiVersion: 'kyb.webhook.api_version',
  /** The receiver's answer code: a rejection code, or an acknowledgement such as `duplicate`, `queued`, `late`. */
  code: 'kyb.webhook.code',
  /** `accepted` (2xx), `rejected` (4xx) or `failed` (5xx: the receiver's own failure, the service retries). */
  outcome: 'kyb.webhook.outcome',
  /** The handler function's name. */
  handler: 'kyb.webhook.handler',
  /**
   * The store method: `claim`, `complete`, `release`, `extend`, `getCursor`, `completeInOrder`, `advanceCursor`,
   * `skipSeq`.
   */
  storeOperation: 'kyb.webhook.store.operation',
  /** `ok` or `error`, for a store call. */
  storeOutcome: 'kyb.webhook.store.outcome',
  /** A client request's path template, ids as `{id}`. */
  urlTemplate: 'url.template',
  /** A client request's API host. */
  serverAddress: 'server.address',
  serverPort: 'server.port',
  /** A client request's retries before this attempt (absent on the first). */
  httpRequestResendCount: 'http.request.resend_count',
  /** The JWKS URL fetched, without credentials or query. */
  urlFull: 'url.full',
  /** `ok` or `error`, for a JWKS fetch. */
  jwksOutcome: 'kyb.webhook.jwks.outcome',
  /** How many keys a fetched JWKS holds. */
  jwksKeys: 'kyb.webhook.jwks.keys',
  /** Ordering: the seq the stream's cursor expected when a backfill began. */
  backfillFromSeq: 'kyb.webhook.backfill.from_seq',
  /** Ordering: how many seqs a backfill settled. */
  backfillFilled: 'kyb.webhook.backfill.filled',
  /** Ordering: `gap`, `late` or `unfillable`. */
  gapKind: 'kyb.webhook.gap.kind',
  /** Ordering: `detect` or `enforce`. */
  orderingMode: 'kyb.webhook.ordering.mode',
  /** Queue mode: the job's run number (1 for its first run, 2 for its first retry). */
  jobAttempt: 'kyb.webhook.job.attempt',
  /** Queue mode: `done`, or `failed` (the job goes back to the queue, to be retried or dead-lettered). */
  jobOutcome: 'kyb.webhook.job.outcome',
} as const);

/**
 * The metric instruments, by name.
 *
 * @example
 * ```ts
 * // keep only this package's deliveries counter in a metric reader's output
 * const deliveries = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics)
 *   .filter((metric) => metric.descriptor.name === METRICS.deliveries)
 * ```
 */
export const METRICS = Object.freeze({
  /** Counter of deliveries, by outcome, code, status and (once authenticated) event type. */
  deliveries: 'kyb.webhook.deliveries',
  /** Histogram of a delivery's processing time in the receiver, in seconds. */
  processDuration: 'kyb.webhook.process.duration',
  /** Histogram of the `Service-Delivery-Attempt` number seen. */
  deliveryAttempt: 'kyb.webhook.delivery.attempt',
  /**
   * Histogram of a delivery's lag: from when the service signed it (the verified `t` of its signature) to its answer,
   * in seconds. Only for deliveries whose HMAC held (receivers with `secrets`).
   */
  deliveryLag: 'kyb.webhook.delivery.lag',
  /** Counter of streams blocked in queue mode (a job's last attempt failed), by `error.type`. */
  streamsBlocked: 'kyb.webhook.streams.blocked',
  /** Histogram of a store call's duration in seconds, by operation and outcome. */
  storeDuration: 'kyb.webhook.store.duration',
  /**
   * Counter of gaps, late events and unfillable seqs seen by the ordering, by kind and mode. Under `enforce` a gap is
   * filled rather than reported: each backfill counts as one gap.
   */
  gaps: 'kyb.webhook.gaps',
  /** Counter of the seqs backfills settled from the API, by the type of the delivery that revealed the gap. */
  backfilledEvents: 'kyb.webhook.backfilled_events',
  /** Counter of attestation JWKS fetches, by outcome and error type. */
  jwksFetches: 'kyb.webhook.jwks.fetches',
  /**
   * Histogram of the client's API requests (each attempt), in seconds, by method, route template, host, status and
   * error type: the HTTP conventions' own metric.
   */
  clientRequestDuration: 'http.client.request.duration',
  /** Queue mode: counter of job runs by a worker, by outcome, code, queue and event type. */
  jobs: 'kyb.webhook.jobs',
  /** Queue mode: histogram of a job run's duration in seconds. */
  jobDuration: 'kyb.webhook.job.duration',
  /** Queue mode: histogram of the seconds from enqueue to a worker starting the run. */
  jobWait: 'kyb.webhook.job.wait',
} as const);

/**
 * The value of `messaging.system`: the KYB service's webhook delivery, a system of its own.
 *
 * @example
 * ```ts
 * const ours = spans.filter((span) => span.attributes[ATTRIBUTES.messagingSystem] === MESSAGING_SYSTEM)
 * ```
 */
export const MESSAGING_SYSTEM = 'kyb_webhooks';

/**
 * The delivery span's name until the event's type is authenticated, and for a delivery refused before that.
 *
 * @example
 * ```ts
 * const refusedEarly = spans.filter((span) => span.name === UNAUTHENTICATED_SPAN_NAME) // forged, malformed, …
 * ```
 */
export const UNAUTHENTICATED_SPAN_NAME = 'process kyb-webhook';
