/**
 * createReceiver's own rules and defaults: every option of `createReceiver`, its aliases (other libraries' names
 * for it) and the rules across options, written with the option kit of option-validation.ts and option-rules.ts.
 * The rule of `secrets`, the HMAC keyring, is in verify/secrets-options.ts, beside the signature check.
 */
import type { ReceiverOptions } from './receiver-types.js';
import { optionRules } from './option-rules.js';
import { rule, validateOptions, type FieldsSpec, type OptionsSpec } from './option-validation.js';
import { secretsRule } from './verify/secrets-options.js';
import { toleranceProblem } from './verify/signature.js';
import { describeValue, isPlainObject } from './option-words.js';
import { DEFAULT_LEASE_MS, DEFAULT_RETAIN_MS, MAX_STORE_DURATION_MS, type DedupeStore } from './store/dedupe.js';
import { isStreamCursorStore } from './store/stream-store.js';
import { jwksUrlRule } from './verify/attestation.js';
import { apiVersionFields } from './pipeline/api-version.js';
import { QUEUE_OPTION_RULES } from './queue/queue-options.js';

/**
 * Default of `handlerTimeoutMs`: how long a handler may run before the delivery is answered 5xx.
 *
 * @example
 * ```ts
 * createReceiver({ secrets, leaseMs: 2 * DEFAULT_HANDLER_TIMEOUT_MS }) // a longer lease, the default handler deadline
 * ```
 */
export const DEFAULT_HANDLER_TIMEOUT_MS = 30_000;
/**
 * Default of `storeTimeoutMs`: how long one dedupe store call may take before it counts as failed.
 *
 * @example
 * ```ts
 * const minimumLeaseMs = DEFAULT_HANDLER_TIMEOUT_MS + 2 * DEFAULT_STORE_TIMEOUT_MS + 1 // what leaseMs must exceed
 * ```
 */
export const DEFAULT_STORE_TIMEOUT_MS = 5_000;

// What every store can write (MySQL's DATETIME ends in 9999): a longer value failed, or was stored already expired,
// only when the first delivery completed.
const storeDurationRule = rule((value) => {
  if (!(typeof value === 'number' && Number.isFinite(value) && value > 0))
    return `must be a positive finite number of milliseconds, got ${describeValue(value)}.`;
  return value > MAX_STORE_DURATION_MS
    ? `must be at most ${MAX_STORE_DURATION_MS} ms (100 years), the longest every store can keep, got ${value}.`
    : undefined;
});

const jwksRule = rule((value) =>
  isPlainObject(value) && Array.isArray(value.keys)
    ? undefined
    : `must be a JSON Web Key Set, { keys: [...] } (or use \`jwksUrl\`), got ${describeValue(value)}.`,
);

const attestationFields: FieldsSpec = {
  options: {
    issuer: optionRules.required(
      optionRules.trimmedString(
        'set it to the {attestation_issuer} of the KYB service',
        'process.env.KYB_ATTESTATION_ISSUER?.trim()',
      ),
      'set it to the {attestation_issuer} of the KYB service (an unset environment variable?).',
    ),
    audience: optionRules.required(
      optionRules.trimmedString(
        "set it to your client domain UUID (the attestations' aud)",
        'process.env.KYB_AUDIENCE?.trim()',
      ),
      "set it to your client domain UUID, the attestations' aud (an unset environment variable?).",
    ),
    jwksUrl: jwksUrlRule,
    jwks: jwksRule,
    leewaySeconds: optionRules.numberBetween(0, 60, 'seconds'),
    // The same bounds as the key source's own checks (attestation.ts), which also relate jwksMaxStaleMs to
    // jwksCacheMaxAgeMs; that rule stays there, beside the defaults it needs.
    jwksCooldownMs: optionRules.wholeNumber(0, 'milliseconds'),
    jwksCacheMaxAgeMs: optionRules.wholeNumber(0, 'milliseconds'),
    jwksTimeoutMs: optionRules.wholeTimerMs(1),
    jwksMaxStaleMs: optionRules.wholeNumber(0, 'milliseconds'),
    jwksMaxBytes: optionRules.wholeNumber(1, 'bytes'),
    fetch: optionRules.func('a fetch implementation'),
    answersClaim: optionRules.nonEmptyString("the name of the claim that holds a release's answers, e.g. 'answers'"),
  },
  aliases: {
    iss: 'issuer',
    aud: 'audience',
    audiences: 'audience',
    clientId: 'audience',
    jwksUri: 'jwksUrl',
    jwksEndpoint: 'jwksUrl',
    url: 'jwksUrl',
    keySet: 'jwks',
    keys: 'jwks',
    leeway: 'leewaySeconds',
    clockTolerance: 'leewaySeconds',
    clockSkew: 'leewaySeconds',
    tolerance: 'leewaySeconds',
    cooldownDuration: 'jwksCooldownMs',
    cacheMaxAge: 'jwksCacheMaxAgeMs',
    timeoutDuration: 'jwksTimeoutMs',
    timeout: 'jwksTimeoutMs',
  },
  refine(values, report, at) {
    const hasUrl = values.jwksUrl !== undefined;
    const hasSet = values.jwks !== undefined;
    if (hasUrl && hasSet) {
      report(
        at('jwksUrl'),
        `and \`${at('jwks')}\` are both set: keep one (jwksUrl fetches the KYB JWKS; jwks is an inline key set).`,
      );
    } else if (!hasUrl && !hasSet) {
      report(
        at('jwksUrl'),
        `is missing: set it to {base_url}/.well-known/kyb-jwks.json (or set \`${at('jwks')}\` to an inline key set).`,
      );
    }
  },
};

const ORDERING_MODES = ['off', 'detect', 'enforce'] as const;
const orderingFields: FieldsSpec = {
  options: {
    mode: optionRules.required(
      rule((value) =>
        (ORDERING_MODES as readonly unknown[]).includes(value)
          ? undefined
          : `must be 'off', 'detect' or 'enforce', got ${describeValue(value)}.`,
      ),
      "set it to 'off', 'detect' (report gaps) or 'enforce' (handlers see each stream in seq order)",
    ),
    firstSeq: rule((value) =>
      value === 0 || value === 1
        ? undefined
        : `must be 0 or 1 (the seq a stream starts at; the spec does not say which, the default is 0), got ${describeValue(value)}.`,
    ),
    fetchEventsAfter: optionRules.func(
      '(streamId, afterSeq, signal) => AsyncIterable of envelopes, e.g. (s, a, signal) => client.events(s, { afterSeq: a, signal })',
    ),
    backfillTimeoutMs: optionRules.timerMs(),
    cursorRetainMs: storeDurationRule,
    // An hour at most: a gap remembered longer would hold a stream well after the API can fill it.
    backfillRetryAfterMs: rule((value) =>
      typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 3_600_000
        ? undefined
        : `must be a whole number of milliseconds from 0 (ask every time) to 3600000 (an hour); the default is 5000. Got ${describeValue(value)}.`,
    ),
    onUnfillable: optionRules.func(
      "(report, event) => 'wait' | { skip: '<why, who decided>' }, called for an earlier event the API can never serve verifiably",
    ),
    engine: optionRules.func("set by streamOrdering(): pass ordering: streamOrdering({ mode: 'enforce', … })"),
  },
  aliases: {
    cursorRetentionMs: 'cursorRetainMs',
    cursorTtlMs: 'cursorRetainMs',
    cursorTtl: 'cursorRetainMs',
    retainCursorMs: 'cursorRetainMs',
    backfillTimeout: 'backfillTimeoutMs',
    backfillTimeoutMS: 'backfillTimeoutMs',
    timeoutMs: 'backfillTimeoutMs',
    ordering: 'mode',
    order: 'mode',
    startSeq: 'firstSeq',
    seqBase: 'firstSeq',
    initialSeq: 'firstSeq',
    fetch: 'fetchEventsAfter',
    fetchEvents: 'fetchEventsAfter',
    backfill: 'fetchEventsAfter',
    eventsAfter: 'fetchEventsAfter',
    backfillRetryMs: 'backfillRetryAfterMs',
    retryAfterMs: 'backfillRetryAfterMs',
    backfillCooldownMs: 'backfillRetryAfterMs',
    onUnfillableGap: 'onUnfillable',
    onSkip: 'onUnfillable',
    onStall: 'onUnfillable',
  },
  refine(values, report, at) {
    if (values.mode === 'enforce' && values.fetchEventsAfter === undefined) {
      report(
        at('fetchEventsAfter'),
        "is missing: mode 'enforce' backfills gaps through it; pass (s, a, signal) => client.events(s, { afterSeq: a, signal }) with a client from " +
          "@kyb-webhooks/client (or use mode 'detect').",
      );
    }
    if (values.onUnfillable !== undefined && values.mode !== 'enforce') {
      report(
        at('onUnfillable'),
        "is only called under mode 'enforce', which backfills: remove it, or set mode: 'enforce'.",
      );
    }
  },
};

const RECEIVER_SPEC: OptionsSpec = {
  owner: 'createReceiver',
  example:
    "createReceiver({ secrets: { '3': process.env.KYB_SECRET_V3 }, attestation: { issuer, audience, jwksUrl } })",
  options: {
    secrets: secretsRule,
    attestation: optionRules.fields(attestationFields, 'issuer, audience and jwksUrl'),
    store: optionRules.methods(
      ['claim', 'complete', 'release'],
      'a dedupe store implements claim, complete and release (DedupeStore); use createMemoryStore(), createRedisStore() or a SQL store',
    ),
    toleranceSeconds: rule((value) => toleranceProblem(value)),
    maxBodyBytes: optionRules.positiveNumber('bytes'),
    leaseMs: storeDurationRule,
    retainMs: storeDurationRule,
    handlerTimeoutMs: optionRules.timerMs(),
    storeTimeoutMs: optionRules.timerMs(),
    now: optionRules.func('a clock in milliseconds, like Date.now'),
    logger: optionRules.funcOrFalse('called with each log entry; false silences the default console logger'),
    ordering: optionRules.fields(orderingFields, "e.g. { mode: 'enforce', fetchEventsAfter }"),
    ...QUEUE_OPTION_RULES,
    apiVersion: optionRules.fields(apiVersionFields, "e.g. { expected: '2026-01-01', onOther: 'accept' }"),
    telemetry: optionRules.methods(
      ['around'],
      'an observability layer with around(operation, trace, run), e.g. openTelemetry() from @kyb-webhooks/opentelemetry',
    ),
    crypto: optionRules.internal(),
  },
  aliases: {
    order: 'ordering',
    orderBy: 'ordering',
    streamOrder: 'ordering',
    secret: 'secrets',
    signingSecret: 'secrets',
    signingSecrets: 'secrets',
    webhookSecret: 'secrets',
    endpointSecret: 'secrets',
    hmacSecret: 'secrets',
    hmacSecrets: 'secrets',
    keyring: 'secrets',
    attest: 'attestation',
    jwt: 'attestation',
    issuer: 'attestation.issuer',
    audience: 'attestation.audience',
    jwksUrl: 'attestation.jwksUrl',
    jwksUri: 'attestation.jwksUrl',
    jwks: 'attestation.jwks',
    leeway: 'attestation.leewaySeconds',
    leewaySeconds: 'attestation.leewaySeconds',
    clockTolerance: 'attestation.leewaySeconds',
    tolerance: 'toleranceSeconds',
    toleranceInSeconds: 'toleranceSeconds',
    timestampTolerance: 'toleranceSeconds',
    maxBodySize: 'maxBodyBytes',
    bodyLimit: 'maxBodyBytes',
    bodySizeLimit: 'maxBodyBytes',
    maxBodyLength: 'maxBodyBytes',
    maxPayloadSize: 'maxBodyBytes',
    limit: 'maxBodyBytes',
    dedupeStore: 'store',
    storage: 'store',
    lease: 'leaseMs',
    leaseDuration: 'leaseMs',
    retain: 'retainMs',
    retention: 'retainMs',
    retentionMs: 'retainMs',
    timeout: 'handlerTimeoutMs',
    handlerTimeout: 'handlerTimeoutMs',
    storeTimeout: 'storeTimeoutMs',
    clock: 'now',
    log: 'logger',
    onLog: 'logger',
  },
  refine(values, report) {
    if (values.secrets === undefined && values.attestation === undefined) {
      report(
        'secrets',
        'and `attestation` are both missing: set `secrets` (HMAC keyring by kv version), `attestation` (issuer, audience, jwksUrl) ' +
          'or both; a receiver with neither would accept forged deliveries.',
      );
    }
    const ordering = values.ordering as { mode?: unknown; cursorRetainMs?: unknown } | undefined;
    const store = values.store as DedupeStore | undefined;
    const retainMs = (values.retainMs as number | undefined) ?? DEFAULT_RETAIN_MS;
    if (typeof ordering?.cursorRetainMs === 'number' && ordering.cursorRetainMs < retainMs) {
      report(
        'ordering.cursorRetainMs',
        `(${ordering.cursorRetainMs} ms) must be at least retainMs (${retainMs} ms): a cursor that expires before its stream's ` +
          'records makes the next event look like a new stream; raise it, or leave it out for 400 days.',
      );
    }
    if (
      (ordering?.mode === 'detect' || ordering?.mode === 'enforce') &&
      typeof (ordering as { engine?: unknown }).engine !== 'function'
    ) {
      report(
        'ordering',
        `mode '${ordering.mode}' needs the ordering engine: pass ordering: streamOrdering({ mode: '${ordering.mode}', … }) ` +
          "(import { streamOrdering } from '@kyb-webhooks/core'), which attaches it; receivers without ordering never load it.",
      );
    }
    if (
      (ordering?.mode === 'detect' || ordering?.mode === 'enforce') &&
      store !== undefined &&
      !isStreamCursorStore(store)
    ) {
      report(
        'store',
        `keeps no stream cursors (getCursor, completeInOrder, advanceCursor), which ordering mode '${ordering.mode}' needs: use a ` +
          "built-in store (createMemoryStore, createRedisStore or a SQL store), implement StreamCursorStore, or set ordering.mode to 'off'.",
      );
    }
    if (
      ordering?.mode === 'enforce' &&
      (ordering as { onUnfillable?: unknown }).onUnfillable !== undefined &&
      store !== undefined &&
      isStreamCursorStore(store) &&
      typeof store.skipSeq !== 'function'
    ) {
      report(
        'store',
        'has no skipSeq, which ordering.onUnfillable needs to record a skip with its reason: use a built-in store ' +
          '(createMemoryStore, createRedisStore or a SQL store), implement skipSeq, or remove onUnfillable.',
      );
    }
    if (values.queueEncryption !== undefined && values.queue === undefined) {
      report(
        'queueEncryption',
        'seals the payloads of queue mode, but `queue` is not set: add `queue` (createMemoryQueue(), the pg-boss or BullMQ queue), or remove queueEncryption.',
      );
    }
    const leaseMs = (values.leaseMs as number | undefined) ?? DEFAULT_LEASE_MS;
    const handlerMs = (values.handlerTimeoutMs as number | undefined) ?? DEFAULT_HANDLER_TIMEOUT_MS;
    const storeMs = (values.storeTimeoutMs as number | undefined) ?? DEFAULT_STORE_TIMEOUT_MS;
    if (!(handlerMs + 2 * storeMs < leaseMs)) {
      report(
        'leaseMs',
        `(${leaseMs} ms) must be longer than handlerTimeoutMs + 2 × storeTimeoutMs (${handlerMs} + 2 × ${storeMs} ms), so that ` +
          'no other delivery can take the event over while this one may still run its handler or settle it: raise leaseMs or lower the timeouts.',
      );
    }
  },
};

/**
 * Checks the options of `createReceiver` and throws `config_invalid` naming every mistake and its fix: a missing or
 * empty secret (an unset environment variable), a `notAfter` that would never end a version or is in seconds,
 * `secrets: {}`, an attestation without issuer, audience or key source (or with whitespace around them), a store
 * without its methods, limits that are not positive numbers, a toleranceSeconds over the spec's 300, a lease shorter
 * than the handler and store deadlines, and unknown option names (with "did you mean").
 * `createReceiver` calls it first; it is exported for wrappers that build receiver options themselves.
 *
 * @example
 * ```ts
 * validateReceiverOptions({ secrets: { '3': process.env.KYB_SECRET_V3 } })
 * // KYB_SECRET_V3 unset → KybWebhookError config_invalid:
 * // "createReceiver: `secrets['3']` is undefined: the environment variable it is read from is probably unset. …"
 * ```
 */
export function validateReceiverOptions(options: unknown): asserts options is ReceiverOptions {
  validateOptions(options, RECEIVER_SPEC);
}
