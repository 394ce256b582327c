import { createHmac, timingSafeEqual } from 'node:crypto';
import {
  base64url,
  createLocalJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  errors,
  jwtVerify,
  type JWTPayload,
} from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { testEvents } from './fixtures.js';
import { signatureHeader } from './hmac.js';
import { TEST_AUDIENCE, TEST_ISSUER, TEST_LOGIN_ISSUER, createTestSigner, type TestSigner } from './signer.js';

const PINNED_MS = Date.parse('2026-03-01T12:00:00.000Z');
const PINNED_SECONDS = PINNED_MS / 1000;

/** Verifies a Service-KYB-Signature value the way spec 5.7 says a receiver does, with node:crypto. */
function macMatches(header: string, body: Uint8Array, secret: string): boolean {
  const match = /^t=(\d+),v1=([0-9a-f]{64}),kv=([^,]+)$/.exec(header);
  if (!match) return false;
  const expected = createHmac('sha256', secret).update(`${match[1]}.`).update(body).digest();
  return timingSafeEqual(expected, Buffer.from(match[2] as string, 'hex'));
}

function headerParts(header: string): { t: number; kv: string } {
  const match = /^t=(\d+),v1=[0-9a-f]{64},kv=(.+)$/.exec(header);
  if (!match) throw new Error('malformed signature header');
  return { t: Number(match[1]), kv: match[2] as string };
}

async function verifyAttestation(token: string, signer: TestSigner) {
  return jwtVerify(token, createLocalJWKSet(signer.jwks), {
    typ: 'kyb-attestation+jwt',
    algorithms: ['RS256'],
    issuer: signer.issuer,
    audience: signer.audience,
    currentDate: new Date(signer.now()),
  });
}

let signer: TestSigner;
let stranger: TestSigner;
beforeAll(async () => {
  [signer, stranger] = await Promise.all([
    createTestSigner({ now: PINNED_MS, secrets: { '1': 'whsec_old', '2': 'whsec_new' } }),
    createTestSigner(),
  ]);
});

describe('createTestSigner', () => {
  it('publishes an RS256 signing key under its kid', () => {
    expect(signer.jwks.keys).toHaveLength(1);
    expect(signer.jwks.keys[0]).toMatchObject({ kty: 'RSA', kid: signer.kid, alg: 'RS256', use: 'sig', e: 'AQAB' });
    expect(signer.jwks.keys[0]).not.toHaveProperty('d');
    // RSA-2048: a 256-byte modulus.
    expect(base64url.decode(signer.jwks.keys[0]?.n as string)).toHaveLength(256);
    expect(stranger.kid).not.toBe(signer.kid);
  });

  it('defaults issuer, audience and one random secret version', () => {
    expect(stranger.issuer).toBe(TEST_ISSUER);
    expect(stranger.audience).toBe(TEST_AUDIENCE);
    expect(TEST_AUDIENCE).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(Object.keys(stranger.secrets)).toEqual(['1']);
    expect(stranger.secrets['1']).toMatch(/^whsec_[0-9a-f]{64}$/);
    expect(stranger.currentVersion).toBe('1');
  });

  it('signs with the highest version by default and refuses a current version it has no secret for', async () => {
    expect(signer.currentVersion).toBe('2');
    const numeric = await createTestSigner({ secrets: { '9': 'a', '10': 'b' } });
    expect(numeric.currentVersion).toBe('10');
    await expect(createTestSigner({ secrets: { '1': 'a' }, currentVersion: '3' })).rejects.toThrow(TypeError);
  });
});

describe('sign: headers and HMAC', () => {
  it('sends exactly the headers of spec 2.4', async () => {
    const envelope = testEvents.dataRequestRefused();
    const { headers, text, body } = await signer.sign(envelope, { attempt: 3 });
    expect(Object.keys(headers).sort()).toEqual([
      'content-type',
      'service-delivery-attempt',
      'service-event-id',
      'service-kyb-api-version',
      'service-kyb-signature',
      'user-agent',
    ]);
    expect(headers).toMatchObject({
      'content-type': 'application/json',
      'service-event-id': envelope.event_id,
      'service-delivery-attempt': '3',
      'service-kyb-api-version': envelope.api_version,
      'user-agent': 'service-kyb-webhooks/1',
    });
    expect(headers['service-kyb-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64},kv=2$/);
    expect(new TextDecoder().decode(body)).toBe(text);
    expect(JSON.parse(text)).toEqual(envelope);
    expect((await signer.sign(envelope)).headers['service-delivery-attempt']).toBe('1');
  });

  it('MACs "<t>." + the exact body bytes with the current secret, t from the signer clock', async () => {
    const { headers, body } = await signer.sign(testEvents.signatureRequestSigned());
    const signature = headers['service-kyb-signature'] as string;
    expect(headerParts(signature)).toEqual({ t: PINNED_SECONDS, kv: '2' });
    expect(macMatches(signature, body, 'whsec_new')).toBe(true);
    expect(macMatches(signature, body, 'whsec_old')).toBe(false);
    const tampered = Uint8Array.from(body);
    tampered[tampered.length - 2] = (tampered[tampered.length - 2] as number) ^ 1;
    expect(macMatches(signature, tampered, 'whsec_new')).toBe(false);
  });

  it('covers non-ASCII bodies byte for byte', async () => {
    const envelope = testEvents.dataRequestPendingApproval({ data: { note: 'Müller & Søn — 株式会社 🚀' } });
    const { headers, body, text } = await signer.sign(envelope);
    expect(body.length).toBeGreaterThan(text.length);
    expect(macMatches(headers['service-kyb-signature'] as string, body, 'whsec_new')).toBe(true);
  });

  it('makes bad signatures on request: old timestamp, other version, forged secret', async () => {
    const envelope = testEvents.dataRequestRefused();
    const stale = (await signer.sign(envelope, { timestamp: PINNED_SECONDS - 301 })).headers[
      'service-kyb-signature'
    ] as string;
    expect(headerParts(stale).t).toBe(PINNED_SECONDS - 301);

    const old = await signer.sign(envelope, { version: '1' });
    expect(headerParts(old.headers['service-kyb-signature'] as string).kv).toBe('1');
    expect(macMatches(old.headers['service-kyb-signature'] as string, old.body, 'whsec_old')).toBe(true);

    const forged = await signer.sign(envelope, { secret: 'whsec_forged' });
    expect(macMatches(forged.headers['service-kyb-signature'] as string, forged.body, 'whsec_new')).toBe(false);
    expect(macMatches(forged.headers['service-kyb-signature'] as string, forged.body, 'whsec_forged')).toBe(true);

    const unknown = signer.hmacHeader(old.body, { version: '7' });
    expect(headerParts(unknown).kv).toBe('7');
  });

  it('hmacHeader and signatureHeader agree and accept strings or bytes', () => {
    const text = '{"a":1}';
    const fromText = signer.hmacHeader(text, { timestamp: 1 });
    expect(fromText).toBe(signer.hmacHeader(new TextEncoder().encode(text), { timestamp: 1 }));
    expect(fromText).toBe(signatureHeader(text, { timestamp: 1, version: '2', secret: 'whsec_new' }));
    expect(fromText).toBe(`t=1,v1=${createHmac('sha256', 'whsec_new').update('1.{"a":1}').digest('hex')},kv=2`);
  });

  it('signBytes signs arbitrary bytes so only the body is at fault', () => {
    const { headers, body } = signer.signBytes('{not json', { contentType: 'text/plain' });
    expect(headers['content-type']).toBe('text/plain');
    expect(headers['service-event-id']).toMatch(/^[0-7][0-9A-HJKMNP-TV-Z]{25}$/);
    expect(macMatches(headers['service-kyb-signature'] as string, body, 'whsec_new')).toBe(true);
  });
});

describe('sign: attestation', () => {
  it('attests released events; the JWT verifies against the JWKS with typ, alg, iss and aud', async () => {
    const envelope = testEvents.dataRequestReleased({ seq: 2 });
    const { envelope: carried, text } = await signer.sign(envelope);
    expect(JSON.parse(text).attestation).toBe(carried.attestation);
    const { payload, protectedHeader } = await verifyAttestation(carried.attestation as string, signer);
    expect(protectedHeader).toEqual({ typ: 'kyb-attestation+jwt', alg: 'RS256', kid: signer.kid });
    expect(payload).toMatchObject({
      iss: TEST_ISSUER,
      aud: signer.audience,
      iat: PINNED_SECONDS,
      exp: PINNED_SECONDS + 600,
      event_id: envelope.event_id,
      stream_id: envelope.stream_id,
      seq: 2,
      request_id: envelope.stream_id,
    });
    const answers = (payload as JWTPayload & { answers: { name: string; subject: string; subject_type: string }[] })
      .answers;
    const directors = answers.filter((answer) => answer.name === 'director_name');
    expect(directors).toHaveLength(2);
    expect(new Set(directors.map((answer) => answer.subject)).size).toBe(2);
    // The values live only in the attestation, never in data (spec §6).
    expect(JSON.stringify(carried.data)).not.toContain('Jane Doe');
  });

  it("writes its token's kid and expiry into a released fixture's data, and keeps values a test passed", async () => {
    const { envelope } = await signer.sign(testEvents.dataRequestReleased());
    const { payload, protectedHeader } = await verifyAttestation(envelope.attestation as string, signer);
    expect(envelope.data.attestation_kid).toBe(protectedHeader.kid);
    expect(envelope.data.attestation_expires_at).toBe(new Date((payload.exp as number) * 1000).toISOString());
    const given = await signer.sign(testEvents.dataRequestReleased({ data: { attestation_kid: 'kid-from-the-test' } }));
    expect(given.envelope.data.attestation_kid).toBe('kid-from-the-test');
  });

  it("dates a fixture's data from the event's timestamp (a pinned clock gives consistent dates)", () => {
    const timestamp = Math.floor(Date.UTC(2026, 0, 1) / 1000);
    const pending = testEvents.dataRequestPendingApproval({ timestamp });
    expect(pending.data.expires_at).toBe('2026-01-08T00:00:00.000Z');
    expect(testEvents.dataRequestReleased({ timestamp }).data.released_at).toBe('2026-01-01T00:00:00.000Z');
  });

  it('attests wallet changes without answers, and leaves unattested types alone', async () => {
    const wallet = await signer.sign(testEvents.businessWalletAddressChanged());
    const { payload } = await verifyAttestation(wallet.envelope.attestation as string, signer);
    expect(payload).not.toHaveProperty('answers');
    for (const factory of [
      testEvents.dataRequestPendingApproval,
      testEvents.signatureRequestSigned,
      testEvents.dataRequestRefused,
    ]) {
      expect((await signer.sign(factory())).envelope).not.toHaveProperty('attestation');
    }
  });

  it('attest: true attests any type; attest: false omits; attestation puts a raw token in', async () => {
    const pending = testEvents.dataRequestPendingApproval();
    const forced = await signer.sign(pending, { attest: true });
    await expect(verifyAttestation(forced.envelope.attestation as string, signer)).resolves.toBeDefined();

    const released = testEvents.dataRequestReleased();
    expect((await signer.sign(released, { attest: false })).envelope).not.toHaveProperty('attestation');
    expect(
      JSON.parse((await signer.sign({ ...released, attestation: 'x' }, { attest: false })).text),
    ).not.toHaveProperty('attestation');
    expect((await signer.sign(released, { attestation: 'not.a.jwt' })).envelope.attestation).toBe('not.a.jwt');
  });

  it('keeps an attestation the envelope already carries, as the service does across retries', async () => {
    const released = await signer.withAttestation(testEvents.dataRequestReleased());
    const again = await signer.sign(released, { attempt: 2 });
    expect(again.envelope.attestation).toBe(released.attestation);
  });

  it('uses given answers and merges claim overrides last', async () => {
    const envelope = testEvents.dataRequestReleased();
    const answers = [{ name: 'company_name', subject_type: 'business', subject: '0xabc', value: 'Other Ltd' }];
    const token = await signer.attest(envelope, { answers, claims: { seq: 99, extra: 'kept' }, expiresInSeconds: 60 });
    const claims = decodeJwt(token);
    expect(claims).toMatchObject({ answers, seq: 99, extra: 'kept', exp: PINNED_SECONDS + 60 });
    const withoutExp = decodeJwt(await signer.attest(envelope, { claims: { exp: undefined } }));
    expect(withoutExp).not.toHaveProperty('exp');
  });

  it('expired or wrong-audience claims fail verification', async () => {
    const envelope = testEvents.dataRequestReleased();
    const expired = await signer.attest(envelope, { claims: { exp: PINNED_SECONDS - 3600 } });
    await expect(verifyAttestation(expired, signer)).rejects.toBeInstanceOf(errors.JWTExpired);
    const otherAudience = await signer.attest(envelope, { claims: { aud: 'another-merchant' } });
    await expect(verifyAttestation(otherAudience, signer)).rejects.toBeInstanceOf(errors.JWTClaimValidationFailed);
  });

  it('header overrides: wrong typ, no kid, or an alg the header lies about', async () => {
    const envelope = testEvents.dataRequestReleased();
    const wrongTyp = await signer.attest(envelope, { header: { typ: 'JWT' } });
    expect(decodeProtectedHeader(wrongTyp).typ).toBe('JWT');
    await expect(verifyAttestation(wrongTyp, signer)).rejects.toBeInstanceOf(errors.JWTClaimValidationFailed);

    const noKid = await signer.attest(envelope, { header: { kid: undefined } });
    expect(decodeProtectedHeader(noKid)).not.toHaveProperty('kid');

    const lying = await signer.attest(envelope, { header: { alg: 'RS512' } });
    expect(decodeProtectedHeader(lying).alg).toBe('RS512');
    await expect(verifyAttestation(lying, signer)).rejects.toBeInstanceOf(errors.JOSEAlgNotAllowed);
    // It really is an RS256 signature, only the header lies.
    const [head, payload, signature] = lying.split('.') as [string, string, string];
    const valid = await crypto.subtle.verify(
      'RSASSA-PKCS1-v1_5',
      signer.key.publicKey,
      new Uint8Array(base64url.decode(signature)),
      new TextEncoder().encode(`${head}.${payload}`),
    );
    expect(valid).toBe(true);
  });
});

describe('bad-token helpers', () => {
  it('loginToken is a login ID token signed by the same key: typ JWT, login issuer, svcid subject', async () => {
    const token = await signer.loginToken();
    expect(decodeProtectedHeader(token)).toEqual({ typ: 'JWT', alg: 'RS256', kid: signer.kid });
    const { payload } = await jwtVerify(token, createLocalJWKSet(signer.jwks), {
      algorithms: ['RS256'],
      currentDate: new Date(PINNED_MS),
    });
    expect(payload.iss).toBe(TEST_LOGIN_ISSUER);
    expect(payload.sub).toMatch(/^svcid:0x[0-9a-f]{40}$/);
    await expect(verifyAttestation(token, signer)).rejects.toThrow(/typ/);
  });

  it('unsignedToken has alg none, the attestation typ and real claims, and no signature', async () => {
    const envelope = testEvents.dataRequestReleased();
    const token = await signer.unsignedToken(envelope);
    expect(decodeProtectedHeader(token)).toEqual({ typ: 'kyb-attestation+jwt', alg: 'none', kid: signer.kid });
    expect(token.endsWith('.')).toBe(true);
    expect(decodeJwt(token)).toMatchObject({ event_id: envelope.event_id, iss: TEST_ISSUER });
    await expect(verifyAttestation(token, signer)).rejects.toThrow();
  });

  it('hs256WithPublicKey is MACed with the public key PEM bytes (key confusion)', async () => {
    const envelope = testEvents.dataRequestReleased();
    const token = await signer.hs256WithPublicKey(envelope);
    expect(decodeProtectedHeader(token)).toEqual({ typ: 'kyb-attestation+jwt', alg: 'HS256', kid: signer.kid });
    // A verifier fooled into using the public key as an HMAC secret accepts it …
    const pemSecret = new TextEncoder().encode(signer.key.publicKeyPem);
    expect(signer.key.publicKeyPem).toMatch(/^-----BEGIN PUBLIC KEY-----/);
    await expect(
      jwtVerify(token, pemSecret, { algorithms: ['HS256'], currentDate: new Date(PINNED_MS) }),
    ).resolves.toBeDefined();
    // … one with alg fixed to RS256 does not.
    await expect(verifyAttestation(token, signer)).rejects.toBeInstanceOf(errors.JOSEAlgNotAllowed);

    const jwkVariant = await signer.hs256WithPublicKey(envelope, { keyFormat: 'jwk' });
    const jwkSecret = new TextEncoder().encode(JSON.stringify(signer.jwks.keys[0]));
    await expect(
      jwtVerify(jwkVariant, jwkSecret, { algorithms: ['HS256'], currentDate: new Date(PINNED_MS) }),
    ).resolves.toBeDefined();
  });

  it("a second signer's attestation names a kid the first JWKS does not have", async () => {
    const envelope = testEvents.dataRequestReleased();
    const foreign = await stranger.attest(envelope, { claims: { aud: signer.audience } });
    expect(decodeProtectedHeader(foreign).kid).toBe(stranger.kid);
    await expect(verifyAttestation(foreign, signer)).rejects.toBeInstanceOf(errors.JWKSNoMatchingKey);
  });
});
