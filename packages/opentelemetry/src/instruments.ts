/*
 * The metric instruments of the OpenTelemetry layer (names.ts names them), made from one meter. Bucket boundaries are
 * advice: a view of the application's own overrides them.
 */
import { ValueType, type Counter, type Histogram, type Meter } from '@opentelemetry/api';
import { METRICS } from './names.js';

/** Seconds buckets for a delivery's processing time (the conventions' HTTP and messaging duration buckets). */
const PROCESS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];
/** Seconds buckets for a store call: most take well under a millisecond to a few. */
const STORE_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
/** The service retries for about 9 hours on an exponential schedule: attempts stay in the low tens. */
const ATTEMPT_BUCKETS = [1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 30];

/** Seconds: a fresh delivery lags a second or so; a retry, minutes to hours (the service retries for about 9 hours). */
const LAG_BUCKETS = [0.5, 1, 2, 5, 10, 30, 60, 300, 900, 3_600, 10_800, 32_400];

/** The instruments, by what they measure. */
export interface Instruments {
  deliveries: Counter;
  processDuration: Histogram;
  deliveryAttempt: Histogram;
  deliveryLag: Histogram;
  storeDuration: Histogram;
  streamsBlocked: Counter;
  jobs: Counter;
  jobDuration: Histogram;
  jobWait: Histogram;
  gaps: Counter;
  backfilledEvents: Counter;
  jwksFetches: Counter;
  clientRequestDuration: Histogram;
}

/** The instruments of `meter`. */
export function instrumentsOf(meter: Meter): Instruments {
  return {
    deliveries: meter.createCounter(METRICS.deliveries, {
      description: 'Webhook deliveries answered, by outcome, code, status and (once authenticated) event type.',
      unit: '{delivery}',
      valueType: ValueType.INT,
    }),
    processDuration: meter.createHistogram(METRICS.processDuration, {
      description: 'Time from a delivery reaching the receiver to its answer.',
      unit: 's',
      advice: { explicitBucketBoundaries: PROCESS_BUCKETS },
    }),
    deliveryAttempt: meter.createHistogram(METRICS.deliveryAttempt, {
      description: 'The Service-Delivery-Attempt number of the deliveries seen (1 for a first delivery).',
      unit: '{attempt}',
      valueType: ValueType.INT,
      advice: { explicitBucketBoundaries: ATTEMPT_BUCKETS },
    }),
    deliveryLag: meter.createHistogram(METRICS.deliveryLag, {
      description: 'Time from the service signing a delivery (its verified signature timestamp) to its answer.',
      unit: 's',
      advice: { explicitBucketBoundaries: LAG_BUCKETS },
    }),
    streamsBlocked: meter.createCounter(METRICS.streamsBlocked, {
      description: 'Streams blocked in queue mode: a job failed its last attempt and waits dead-lettered.',
      unit: '{stream}',
      valueType: ValueType.INT,
    }),
    storeDuration: meter.createHistogram(METRICS.storeDuration, {
      description: 'Time of one call of the dedupe or cursor store, by operation and outcome.',
      unit: 's',
      advice: { explicitBucketBoundaries: STORE_BUCKETS },
    }),
    jobs: meter.createCounter(METRICS.jobs, {
      description: 'Queue mode: job runs by a worker, by outcome (done or failed back to the queue), code and queue.',
      unit: '{run}',
      valueType: ValueType.INT,
    }),
    jobDuration: meter.createHistogram(METRICS.jobDuration, {
      description: 'Queue mode: time of one job run by a worker (claim, handlers, settle).',
      unit: 's',
      advice: { explicitBucketBoundaries: PROCESS_BUCKETS },
    }),
    gaps: meter.createCounter(METRICS.gaps, {
      description:
        'Ordering: gaps (ahead of the cursor; under enforce, each backfill), late events (behind it) and unfillable seqs, by kind and mode.',
      unit: '{gap}',
      valueType: ValueType.INT,
    }),
    backfilledEvents: meter.createCounter(METRICS.backfilledEvents, {
      description: 'Ordering enforce: seqs a backfill settled from the API (ran, found done, or skipped).',
      unit: '{event}',
      valueType: ValueType.INT,
    }),
    jwksFetches: meter.createCounter(METRICS.jwksFetches, {
      description: 'Fetches of the attestation JWKS, by outcome (ok or error) and error type.',
      unit: '{fetch}',
      valueType: ValueType.INT,
    }),
    clientRequestDuration: meter.createHistogram(METRICS.clientRequestDuration, {
      description: 'Duration of the KYB API requests of @kyb-webhooks/client, one per attempt.',
      unit: 's',
      advice: { explicitBucketBoundaries: PROCESS_BUCKETS },
    }),
    jobWait: meter.createHistogram(METRICS.jobWait, {
      description: 'Queue mode: time from the receiver enqueuing an event to a worker starting a run of it.',
      unit: 's',
      advice: { explicitBucketBoundaries: LAG_BUCKETS },
    }),
  };
}
