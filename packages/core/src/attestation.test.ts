import { KeyObject, sign } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// The test kit depends on this package, so the core's own tests reach it by path rather than by a cyclic dependency.
import { createTestSigner, startJwksServer, testEvents, type TestSigner } from '../../testing/src/index.js';
import { createAttestationVerifier, type AttestationOptions } from './attestation.js';
import { platformCrypto as nodeCrypto } from './crypto/node.js';
import { platformCrypto as webCrypto } from './crypto/web.js';
import type { PlatformCrypto } from './crypto/types.js';
import { KybWebhookError } from './errors.js';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
const NOW_S = NOW / 1000;

let signer: TestSigner;
let stranger: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW });
  stranger = await createTestSigner({ now: NOW });
});

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'ok';
  } catch (error) {
    if (error instanceof KybWebhookError) return error.code;
    throw error;
  }
}

describe.each<[string, PlatformCrypto]>([
  ['node:crypto fast path', nodeCrypto],
  ['jose jwtVerify path', webCrypto],
])('attestation (%s)', (_name, crypto) => {
  const verifier = (overrides: Partial<AttestationOptions> = {}, now = NOW) =>
    createAttestationVerifier(
      { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks, ...overrides },
      () => now,
      crypto,
    );

  it('accepts a genuine attestation and returns its claims, answers included', async () => {
    const envelope = testEvents.dataRequestReleased();
    const claims = await verifier()(await signer.attest(envelope), envelope);
    expect(claims).toMatchObject({ event_id: envelope.event_id, stream_id: envelope.stream_id, request_id: envelope.stream_id, seq: envelope.seq, iss: signer.issuer, aud: signer.audience });
    expect(Array.isArray(claims['answers'])).toBe(true);
  });

  it('5.5.1 rejects a wrong typ before any key is fetched (a login token among them)', async () => {
    const envelope = testEvents.dataRequestReleased();
    const jwks = await startJwksServer(signer.jwks);
    try {
      const verify = verifier({ jwks: undefined, jwksUrl: jwks.url });
      expect(await codeOf(verify(await signer.loginToken(), envelope))).toBe('attestation_invalid_typ');
      expect(await codeOf(verify(await signer.attest(envelope, { header: { typ: 'JWT' } }), envelope))).toBe('attestation_invalid_typ');
      expect(await codeOf(verify(await signer.attest(envelope, { header: { typ: undefined } }), envelope))).toBe('attestation_invalid_typ');
      expect(jwks.requests).toBe(0);
      // RFC 7515 §4.1.9 spellings of the right typ are the right typ.
      expect(await codeOf(verify(await signer.attest(envelope, { header: { typ: 'application/KYB-Attestation+JWT' } }), envelope))).toBe('ok');
    } finally {
      await jwks.close();
    }
  });

  it('5.5.2 pins RS256: alg none, HS256 with the public key and a lying alg header all fail', async () => {
    const envelope = testEvents.dataRequestReleased();
    const verify = verifier();
    expect(await codeOf(verify(await signer.unsignedToken(envelope), envelope))).toBe('attestation_invalid');
    expect(await codeOf(verify(await signer.hs256WithPublicKey(envelope), envelope))).toBe('attestation_invalid');
    expect(await codeOf(verify(await signer.hs256WithPublicKey(envelope, { keyFormat: 'jwk' }), envelope))).toBe('attestation_invalid');
    expect(await codeOf(verify(await signer.attest(envelope, { header: { alg: 'RS512' } }), envelope))).toBe('attestation_invalid');
    expect(await codeOf(verify(await signer.attest(envelope, { header: { alg: 'PS256' } }), envelope))).toBe('attestation_invalid');
  });

  it('5.5.3 rejects a token signed by another key, an unknown kid and a tampered payload', async () => {
    const envelope = testEvents.dataRequestReleased();
    const verify = verifier();
    expect(await codeOf(verify(await stranger.attest(envelope), envelope))).toBe('attestation_invalid');
    const strangerUnderOurKid = await stranger.attest(envelope, { header: { kid: signer.kid } });
    expect(await codeOf(verify(strangerUnderOurKid, envelope))).toBe('attestation_invalid');
    const [header, payload, signature] = (await signer.attest(envelope)).split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const forged = Buffer.from(JSON.stringify({ ...claims, answers: [] })).toString('base64url');
    expect(await codeOf(verify(`${header}.${forged}.${signature}`, envelope))).toBe('attestation_invalid');
    expect(await codeOf(verify(`${header}.${payload}.${signature.slice(0, -4)}AAAA`, envelope))).toBe('attestation_invalid');
    expect(await codeOf(verify('not-a-jwt', envelope))).toBe('attestation_invalid');
    expect(await codeOf(verify('a.b.c.d.e', envelope))).toBe('attestation_invalid');
    expect(await codeOf(verify(`${header}.!!.${signature}`, envelope))).toBe('attestation_invalid');
  });

  it('5.5.4 checks iss and aud', async () => {
    const envelope = testEvents.dataRequestReleased();
    const verify = verifier();
    expect(await codeOf(verify(await signer.attest(envelope, { claims: { iss: 'https://evil.example' } }), envelope))).toBe('attestation_invalid');
    expect(await codeOf(verify(await signer.attest(envelope, { claims: { iss: undefined } }), envelope))).toBe('attestation_invalid');
    expect(await codeOf(verify(await signer.attest(envelope, { claims: { aud: 'another-merchant' } }), envelope))).toBe('attestation_invalid');
    expect(await codeOf(verify(await signer.attest(envelope, { claims: { aud: undefined } }), envelope))).toBe('attestation_invalid');
    expect(await codeOf(verify(await signer.attest(envelope, { claims: { aud: ['x', signer.audience] } }), envelope))).toBe('ok');
  });

  it('5.5.4 checks exp and iat with the leeway and no more', async () => {
    const envelope = testEvents.dataRequestReleased();
    const verify = verifier({ leewaySeconds: 30 });
    const token = (claims: Record<string, unknown>) => signer.attest(envelope, { claims });
    expect(await codeOf(verify(await token({ exp: NOW_S - 31 }), envelope))).toBe('attestation_invalid');
    expect(await codeOf(verify(await token({ exp: NOW_S - 29 }), envelope))).toBe('ok');
    expect(await codeOf(verify(await token({ exp: undefined }), envelope))).toBe('attestation_invalid');
    expect(await codeOf(verify(await token({ exp: 'tomorrow' }), envelope))).toBe('attestation_invalid');
    expect(await codeOf(verify(await token({ iat: NOW_S + 31 }), envelope))).toBe('attestation_invalid');
    expect(await codeOf(verify(await token({ iat: NOW_S + 29 }), envelope))).toBe('ok');
    expect(await codeOf(verify(await token({ iat: undefined }), envelope))).toBe('attestation_invalid');
    expect(await codeOf(verify(await token({ nbf: NOW_S + 31 }), envelope))).toBe('attestation_invalid');
  });

  it('5.5.5 rejects a relabelled event_id, stream_id, seq or request_id', async () => {
    const envelope = testEvents.dataRequestReleased();
    const token = await signer.attest(envelope);
    const verify = verifier();
    const other = testEvents.dataRequestReleased();
    expect(await codeOf(verify(token, { ...envelope, event_id: other.event_id }))).toBe('attestation_relabelled');
    expect(await codeOf(verify(token, { ...envelope, stream_id: 'dr_other' }))).toBe('attestation_relabelled');
    expect(await codeOf(verify(token, { ...envelope, seq: envelope.seq + 1 }))).toBe('attestation_relabelled');
    expect(await codeOf(verify(await signer.attest(envelope, { claims: { request_id: 'dr_other' } }), envelope))).toBe('attestation_relabelled');
    expect(await codeOf(verify(await signer.attest(envelope, { claims: { seq: String(envelope.seq) } }), envelope))).toBe('attestation_relabelled');
    expect(await codeOf(verify(await signer.attest(envelope, { claims: { event_id: undefined } }), envelope))).toBe('attestation_invalid');
    expect(await codeOf(verify(token, { ...envelope, data: { ...envelope.data, request_id: 'dr_other' } }))).toBe('attestation_relabelled');
  });

  it('refuses a crit header it does not understand', async () => {
    const envelope = testEvents.dataRequestReleased();
    // jose will not sign an unknown crit, so this token is signed by hand with the right key.
    const [, payload] = (await signer.attest(envelope)).split('.') as [string, string];
    const header = Buffer.from(JSON.stringify({ typ: 'kyb-attestation+jwt', alg: 'RS256', kid: signer.kid, crit: ['x-unknown'], 'x-unknown': 1 })).toString('base64url');
    const key = KeyObject.from(signer.key.privateKey);
    const signature = sign('RSA-SHA256', Buffer.from(`${header}.${payload}`), key).toString('base64url');
    expect(await codeOf(verifier()(`${header}.${payload}.${signature}`, envelope))).toBe('attestation_invalid');
  });
});

describe('attestation keys from jwksUrl', () => {
  let server: Awaited<ReturnType<typeof startJwksServer>>;
  beforeAll(async () => {
    server = await startJwksServer(() => signer.jwks);
  });
  afterAll(() => server.close());

  it('fetches the JWKS once and caches it', async () => {
    const before = server.requests;
    const verify = createAttestationVerifier({ issuer: signer.issuer, audience: signer.audience, jwksUrl: server.url }, () => NOW);
    for (let i = 0; i < 5; i++) {
      const envelope = testEvents.dataRequestReleased();
      await verify(await signer.attest(envelope), envelope);
    }
    expect(server.requests - before).toBe(1);
  });

  it('refetches on an unknown kid at most once per cooldown, and so picks up a rotated key', async () => {
    const rotated = await createTestSigner({ now: NOW });
    const jwksServer = await startJwksServer(signer.jwks);
    try {
      const verify = createAttestationVerifier(
        { issuer: signer.issuer, audience: signer.audience, jwksUrl: jwksServer.url, jwksCooldownMs: 300 },
        () => NOW,
      );
      const envelope = testEvents.dataRequestReleased();
      await verify(await signer.attest(envelope), envelope);
      expect(jwksServer.requests).toBe(1);
      // Within the cooldown of the last fetch, a flood of unknown kids fetches nothing.
      const flood = await stranger.attest(envelope);
      for (let i = 0; i < 20; i++) expect(await codeOf(verify(flood, envelope))).toBe('attestation_invalid');
      expect(jwksServer.requests).toBe(1);
      // After it, the first unknown kid refetches once; the keys now include the rotated one.
      await new Promise((resolve) => setTimeout(resolve, 350));
      jwksServer.setJwks({ keys: [...signer.jwks.keys, ...rotated.jwks.keys] });
      const results = await Promise.all(
        Array.from({ length: 20 }, async () => codeOf(verify(await rotated.attest(envelope, { claims: { iss: signer.issuer, aud: signer.audience } }), envelope))),
      );
      expect(results.every((code) => code === 'ok')).toBe(true);
      expect(jwksServer.requests).toBe(2);
      for (let i = 0; i < 20; i++) expect(await codeOf(verify(flood, envelope))).toBe('attestation_invalid');
      expect(jwksServer.requests).toBe(2);
    } finally {
      await jwksServer.close();
    }
  });

  it('answers jwks_unavailable when the JWKS host is down', async () => {
    const down = await startJwksServer(signer.jwks);
    const url = down.url;
    await down.close();
    const verify = createAttestationVerifier({ issuer: signer.issuer, audience: signer.audience, jwksUrl: url, jwksTimeoutMs: 500 }, () => NOW);
    const envelope = testEvents.dataRequestReleased();
    expect(await codeOf(verify(await signer.attest(envelope), envelope))).toBe('jwks_unavailable');
  });

  it('refuses a plain-http JWKS URL that is not loopback, and other bad options, at start-up', () => {
    const base = { issuer: 'i', audience: 'a' };
    expect(() => createAttestationVerifier({ ...base, jwksUrl: 'http://kyb.example.com/jwks' }, Date.now)).toThrowError(/https/);
    expect(() => createAttestationVerifier({ ...base }, Date.now)).toThrowError(/jwksUrl/);
    expect(() => createAttestationVerifier({ ...base, jwks: { keys: [] }, leewaySeconds: 120 }, Date.now)).toThrowError(/leeway/);
    expect(() => createAttestationVerifier({ ...base, issuer: '', jwks: { keys: [] } }, Date.now)).toThrowError(/issuer/);
  });
});
