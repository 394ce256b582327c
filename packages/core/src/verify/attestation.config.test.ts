// createAttestationVerifier used on its own (the client and custom pipelines call it without createReceiver's option
// checks): what it refuses at creation, and what a clock that answers no number does to a delivery.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, expectConfigInvalid, testEvents, type TestSigner } from '../../test-kit.js';
import { KybWebhookError } from '../errors.js';
import { createAttestationVerifier, type AttestationOptions, type EnvelopeIdentity } from './attestation.js';
import { createReceiver } from '../receiver.js';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
const ISSUER = 'https://kyb.example.com';
const AUDIENCE = '3b241101-e2bb-4255-8caf-4136c566a962';
const JWKS_URL = 'https://api.kyb.example.com/.well-known/kyb-jwks.json';

let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW });
});

const create = (overrides: Partial<AttestationOptions>, now: () => number = () => NOW) =>
  createAttestationVerifier({ issuer: ISSUER, audience: AUDIENCE, jwksUrl: JWKS_URL, ...overrides }, now);

// A value read from a secrets file keeps its newline, and `aud` is compared whole: every attested delivery got 401.
describe('issuer and audience with whitespace around them', () => {
  it.each<[string, Partial<AttestationOptions>, string]>([
    ['an audience ending in a newline', { audience: `${AUDIENCE}\n` }, 'attestation.audience'],
    ['an audience with a leading space', { audience: ` ${AUDIENCE}` }, 'attestation.audience'],
    ['an issuer ending in a newline', { issuer: `${ISSUER}\n` }, 'attestation.issuer'],
  ])('refuses %s at creation', (_case, overrides, option) => {
    const error = expectConfigInvalid(() => create(overrides), [`${option} has leading or trailing whitespace`]);
    expect(error.message).not.toContain(AUDIENCE);
  });

  it('accepts an audience that is not a UUID', () => {
    expect(typeof create({ audience: 'merchant-client-domain' })).toBe('function');
  });
});

// new URL() threw a TypeError whose `input` held the whole URL, credentials included.
describe('a jwksUrl that does not parse', () => {
  it.each<[string, string]>([
    ['a host with a space, credentials in it', 'https://kyb-user:s3cr3t-pass@api.kyb example.com/jwks'],
    ['a relative path', '/.well-known/kyb-jwks.json?token=s3cr3t-pass'],
  ])('%s is config_invalid, without the URL', (_case, jwksUrl) => {
    const error = expectConfigInvalid(() => create({ jwksUrl }), ['`attestation.jwksUrl` is not an absolute URL']);
    expect(error.cause).toBeUndefined();
    expect(`${error.message} ${error.stack} ${JSON.stringify(error)}`).not.toContain('s3cr3t-pass');
  });
});

// The JWKS is public, and fetch rejects a URL with credentials with an error quoting it whole, into logs and traces.
describe('a jwksUrl with credentials', () => {
  it.each<[string, string]>([
    ['a user and a password', 'https://kyb-user:s3cr3t-pass@api.kyb.example.com/.well-known/kyb-jwks.json'],
    ['a user alone', 'https://s3cr3t-pass@api.kyb.example.com/.well-known/kyb-jwks.json'],
    ['a password on loopback http', 'http://u:s3cr3t-pass@127.0.0.1:8080/jwks'],
  ])('%s is config_invalid, without the URL, here and in createReceiver', (_case, jwksUrl) => {
    const words = ['attestation.jwksUrl', 'must not carry credentials'];
    for (const error of [
      expectConfigInvalid(() => create({ jwksUrl }), words),
      expectConfigInvalid(
        () => createReceiver({ secrets: { '1': 'x' }, attestation: { issuer: ISSUER, audience: AUDIENCE, jwksUrl } }),
        words,
      ),
    ])
      expect(`${error.message} ${error.stack} ${JSON.stringify(error)}`).not.toContain('s3cr3t-pass');
  });
});

// A set jose finds no RS256 key in refused every attestation with 401 until the endpoint was quarantined.
describe('an inline JWKS with no key usable for RS256', () => {
  const usable = () => signer.jwks.keys[0]!;
  it.each<[string, () => unknown[]]>([
    ['no key at all', () => []],
    ['an EC key', () => [{ ...usable(), kty: 'EC' }]],
    ['a key for RS512', () => [{ ...usable(), alg: 'RS512' }]],
    ['a key for encryption', () => [{ ...usable(), use: 'enc' }]],
    ['a key without kid', () => [{ ...usable(), kid: undefined }]],
    ['a key whose key_ops lack verify', () => [{ ...usable(), key_ops: ['encrypt'] }]],
  ])('refuses %s at creation', (_case, keys) => {
    expectConfigInvalid(
      () => create({ jwksUrl: undefined, jwks: { keys: keys() as never } }),
      ['attestation.jwks has no key usable for RS256 attestations'],
    );
  });

  it.each<[string, () => unknown[]]>([
    ['the service’s keys', () => signer.jwks.keys],
    ['a usable key beside an EC one', () => [{ ...usable(), kty: 'EC', kid: 'other' }, usable()]],
    ['a key without alg or use', () => [{ ...usable(), alg: undefined, use: undefined }]],
    ['a key with key_ops verify', () => [{ ...usable(), key_ops: ['verify'] }]],
  ])('accepts %s', (_case, keys) => {
    expect(typeof create({ jwksUrl: undefined, jwks: { keys: keys() as never } })).toBe('function');
  });
});

describe('the clock', () => {
  it('refuses a clock that is not a function at creation', () => {
    expectConfigInvalid(() => create({}, NOW as never), ['clock must be a function']);
  });

  // Math.floor(undefined / 1000) is NaN, and every claim comparison with NaN was false: an expired token passed.
  it.each<[string, unknown]>([
    ['undefined', undefined],
    ['NaN', Number.NaN],
  ])('refuses a token that expired in 2020 with internal_error when the clock answers %s', async (_case, reading) => {
    const old = await createTestSigner({ now: Date.UTC(2020, 0, 1), key: signer.key });
    const verify = create(
      { issuer: old.issuer, audience: old.audience, jwksUrl: undefined, jwks: signer.jwks },
      () => reading as number,
    );
    const envelope = testEvents.dataRequestReleased();
    let thrown: unknown;
    try {
      await verify(await old.attest(envelope), envelope as unknown as EnvelopeIdentity);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(KybWebhookError);
    expect((thrown as KybWebhookError).code).toBe('internal_error');
  });
});
