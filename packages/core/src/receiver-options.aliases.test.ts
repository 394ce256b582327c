import { describe, expect, it } from 'vitest';
import { expectConfigInvalid } from '../test-kit.js';
import { validateReceiverOptions } from './receiver-options.js';

/** The message of the config_invalid error `run` throws (the test fails when it throws nothing else). */
const messageOf = (run: () => unknown): string => expectConfigInvalid(run).message;

// Another library's name for an option (or a common wrong one) is refused with the name that was meant, at every
// level of createReceiver's options; and a wrong value of an option is refused with the fix for that option.

const SECRET = 'whsec_0123456789';
const secrets = { '3': SECRET };
const attestation = {
  issuer: 'https://kyb.example.com',
  audience: 'b2f7c3e0-0000-4000-8000-000000000000',
  jwksUrl: 'https://api.kyb.example.com/.well-known/kyb-jwks.json',
};

describe('a secret version ({ secret, notAfter }) suggests the option another name stands for', () => {
  it.each<[string, string]>([
    ['value', 'secret'],
    ['key', 'secret'],
    ['expires', 'notAfter'],
    ['expiresAt', 'notAfter'],
    ['validUntil', 'notAfter'],
    ['until', 'notAfter'],
    ['notAfterMs', 'notAfter'],
    ['expiry', 'notAfter'],
  ])('%s → %s', (alias, meant) => {
    const message = messageOf(() =>
      validateReceiverOptions({ secrets: { '2': { secret: SECRET, [alias]: 'x' }, '3': SECRET } }),
    );
    expect(message).toBe(
      `createReceiver: \`secrets['2'].${alias}\` is not an option: did you mean \`secrets['2'].${meant}\`?`,
    );
  });
});

describe('attestation suggests the option another name stands for', () => {
  it.each<[string, string]>([
    ['iss', 'issuer'],
    ['aud', 'audience'],
    ['audiences', 'audience'],
    ['clientId', 'audience'],
    ['jwksUri', 'jwksUrl'],
    ['jwks_uri', 'jwksUrl'],
    ['jwksEndpoint', 'jwksUrl'],
    ['url', 'jwksUrl'],
    ['keySet', 'jwks'],
    ['keys', 'jwks'],
    ['leeway', 'leewaySeconds'],
    ['clockTolerance', 'leewaySeconds'],
    ['clockSkew', 'leewaySeconds'],
    ['tolerance', 'leewaySeconds'],
    ['cooldownDuration', 'jwksCooldownMs'],
    ['cacheMaxAge', 'jwksCacheMaxAgeMs'],
    ['timeoutDuration', 'jwksTimeoutMs'],
    ['timeout', 'jwksTimeoutMs'],
  ])('%s → %s', (alias, meant) => {
    const message = messageOf(() => validateReceiverOptions({ attestation: { ...attestation, [alias]: 1 } }));
    expect(message).toBe(
      `createReceiver: \`attestation.${alias}\` is not an option: did you mean \`attestation.${meant}\`?`,
    );
  });
});

describe('ordering suggests the option another name stands for', () => {
  it.each<[string, string]>([
    ['cursorRetentionMs', 'cursorRetainMs'],
    ['cursorTtlMs', 'cursorRetainMs'],
    ['cursorTtl', 'cursorRetainMs'],
    ['retainCursorMs', 'cursorRetainMs'],
    ['backfillTimeout', 'backfillTimeoutMs'],
    ['backfillTimeoutMS', 'backfillTimeoutMs'],
    ['timeoutMs', 'backfillTimeoutMs'],
    ['ordering', 'mode'],
    ['order', 'mode'],
    ['startSeq', 'firstSeq'],
    ['seqBase', 'firstSeq'],
    ['initialSeq', 'firstSeq'],
    ['fetch', 'fetchEventsAfter'],
    ['fetchEvents', 'fetchEventsAfter'],
    ['backfill', 'fetchEventsAfter'],
    ['eventsAfter', 'fetchEventsAfter'],
    ['backfillRetryMs', 'backfillRetryAfterMs'],
    ['retryAfterMs', 'backfillRetryAfterMs'],
    ['backfillCooldownMs', 'backfillRetryAfterMs'],
    ['onUnfillableGap', 'onUnfillable'],
    ['onSkip', 'onUnfillable'],
    ['onStall', 'onUnfillable'],
  ])('%s → %s', (alias, meant) => {
    const message = messageOf(() => validateReceiverOptions({ secrets, ordering: { mode: 'off', [alias]: 1 } }));
    expect(message).toBe(`createReceiver: \`ordering.${alias}\` is not an option: did you mean \`ordering.${meant}\`?`);
  });
});

describe('a wrong value of an attestation option is refused with its fix', () => {
  it.each<[string, Record<string, unknown>, string]>([
    [
      'an empty issuer',
      { issuer: '' },
      '`attestation.issuer` is empty: set it to the {attestation_issuer} of the KYB service.',
    ],
    [
      'an unset issuer',
      { issuer: undefined },
      '`attestation.issuer` is missing: set it to the {attestation_issuer} of the KYB service (an unset environment variable?).',
    ],
    [
      'an empty audience',
      { audience: '' },
      "`attestation.audience` is empty: set it to your client domain UUID (the attestations' aud).",
    ],
    [
      'an unset audience',
      { audience: undefined },
      "`attestation.audience` is missing: set it to your client domain UUID, the attestations' aud (an unset environment variable?).",
    ],
    [
      'a negative jwksCooldownMs',
      { jwksCooldownMs: -1 },
      '`attestation.jwksCooldownMs` must be a whole number of milliseconds of at least 0, got a negative number.',
    ],
    [
      'a negative jwksCacheMaxAgeMs',
      { jwksCacheMaxAgeMs: -1 },
      '`attestation.jwksCacheMaxAgeMs` must be a whole number of milliseconds of at least 0, got a negative number.',
    ],
    [
      'a fetch that is not a function',
      { fetch: {} },
      '`attestation.fetch` must be a function (a fetch implementation), got an object.',
    ],
    [
      'an empty answersClaim',
      { answersClaim: '' },
      "`attestation.answersClaim` is empty: the name of the claim that holds a release's answers, e.g. 'answers'.",
    ],
  ])('%s', (_name, override, problem) => {
    expect(messageOf(() => validateReceiverOptions({ attestation: { ...attestation, ...override } }))).toBe(
      `createReceiver: ${problem}`,
    );
  });
});

describe('a wrong value of an ordering option is refused with its fix', () => {
  it.each<[string, Record<string, unknown>, string]>([
    [
      'no mode',
      {},
      "`ordering.mode` is missing: set it to 'off', 'detect' (report gaps) or 'enforce' (handlers see each stream in seq order)",
    ],
    [
      'a fetchEventsAfter that is not a function',
      { mode: 'off', fetchEventsAfter: 'https://api.kyb.example.com/events' },
      '`ordering.fetchEventsAfter` must be a function ((streamId, afterSeq, signal) => AsyncIterable of envelopes, ' +
        'e.g. (s, a, signal) => client.events(s, { afterSeq: a, signal })), got a string.',
    ],
    [
      'an onUnfillable that is not a function',
      { mode: 'off', onUnfillable: 'wait' },
      "`ordering.onUnfillable` must be a function ((report, event) => 'wait' | { skip: '<why, who decided>' }, " +
        'called for an earlier event the API can never serve verifiably), got a string.',
    ],
    [
      'an engine that is not a function',
      { mode: 'off', engine: 'createOrderedPath' },
      "`ordering.engine` must be a function (set by streamOrdering(): pass ordering: streamOrdering({ mode: 'enforce', … })), " +
        'got a string.',
    ],
  ])('%s', (_name, ordering, problem) => {
    expect(messageOf(() => validateReceiverOptions({ secrets, ordering }))).toBe(`createReceiver: ${problem}`);
  });
});

describe("createReceiver's options suggest the option another name stands for", () => {
  it.each<[string, string]>([
    ['order', 'ordering'],
    ['orderBy', 'ordering'],
    ['streamOrder', 'ordering'],
    ['secret', 'secrets'],
    ['signingSecret', 'secrets'],
    ['signingSecrets', 'secrets'],
    ['webhookSecret', 'secrets'],
    ['endpointSecret', 'secrets'],
    ['hmacSecret', 'secrets'],
    ['hmacSecrets', 'secrets'],
    ['keyring', 'secrets'],
    ['attest', 'attestation'],
    ['jwt', 'attestation'],
    ['issuer', 'attestation.issuer'],
    ['audience', 'attestation.audience'],
    ['jwksUrl', 'attestation.jwksUrl'],
    ['jwksUri', 'attestation.jwksUrl'],
    ['jwks', 'attestation.jwks'],
    ['leeway', 'attestation.leewaySeconds'],
    ['leewaySeconds', 'attestation.leewaySeconds'],
    ['clockTolerance', 'attestation.leewaySeconds'],
    ['tolerance', 'toleranceSeconds'],
    ['toleranceInSeconds', 'toleranceSeconds'],
    ['timestampTolerance', 'toleranceSeconds'],
    ['maxBodySize', 'maxBodyBytes'],
    ['bodyLimit', 'maxBodyBytes'],
    ['bodySizeLimit', 'maxBodyBytes'],
    ['maxBodyLength', 'maxBodyBytes'],
    ['maxPayloadSize', 'maxBodyBytes'],
    ['limit', 'maxBodyBytes'],
    ['dedupeStore', 'store'],
    ['storage', 'store'],
    ['lease', 'leaseMs'],
    ['leaseDuration', 'leaseMs'],
    ['retain', 'retainMs'],
    ['retention', 'retainMs'],
    ['retentionMs', 'retainMs'],
    ['timeout', 'handlerTimeoutMs'],
    ['handlerTimeout', 'handlerTimeoutMs'],
    ['storeTimeout', 'storeTimeoutMs'],
    ['clock', 'now'],
    ['log', 'logger'],
    ['onLog', 'logger'],
  ])('%s → %s', (alias, meant) => {
    const message = messageOf(() => validateReceiverOptions({ secrets, [alias]: 1 }));
    expect(message).toBe(`createReceiver: \`${alias}\` is not an option: did you mean \`${meant}\`?`);
  });
});

describe("a wrong value of one of createReceiver's options is refused with its fix", () => {
  it.each<[string, Record<string, unknown>, string]>([
    [
      'an attestation that is not an object',
      { attestation: 1 },
      '`attestation` must be an object (issuer, audience and jwksUrl), got a number.',
    ],
    [
      'a store without its methods',
      { store: {} },
      '`store` has no claim, complete or release methods: a dedupe store implements claim, complete and release ' +
        '(DedupeStore); use createMemoryStore(), createRedisStore() or a SQL store.',
    ],
    [
      'a negative toleranceSeconds',
      { toleranceSeconds: -1 },
      '`toleranceSeconds` must be a positive finite number of seconds, got a negative number.',
    ],
    [
      'a negative maxBodyBytes',
      { maxBodyBytes: -1 },
      '`maxBodyBytes` must be a positive finite number of bytes, got a negative number.',
    ],
    [
      'a now that is not a function',
      { now: 1 },
      '`now` must be a function (a clock in milliseconds, like Date.now), got a number.',
    ],
    [
      'a logger that is neither a function nor false',
      { logger: 1 },
      '`logger` must be a function (called with each log entry; false silences the default console logger) or false, ' +
        'got a number.',
    ],
    [
      'an ordering that is not an object',
      { ordering: 1 },
      "`ordering` must be an object (e.g. { mode: 'enforce', fetchEventsAfter }), got a number.",
    ],
    [
      'an apiVersion that is not an object',
      { apiVersion: 1 },
      "`apiVersion` must be an object (e.g. { expected: '2026-01-01', onOther: 'accept' }), got a number.",
    ],
    [
      'a telemetry without around',
      { telemetry: {} },
      '`telemetry` has no around method: an observability layer with around(operation, trace, run), ' +
        'e.g. openTelemetry() from @kyb-webhooks/opentelemetry.',
    ],
  ])('%s', (_name, override, problem) => {
    expect(messageOf(() => validateReceiverOptions({ secrets, ...override }))).toBe(`createReceiver: ${problem}`);
  });
});
