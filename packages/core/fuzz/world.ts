/*
 * Everything the fuzz cases are built from, made once per run: keys, secrets, a small pool of genuine deliveries
 * (with their attestations signed in advance, because an RSA signature costs about a millisecond) and a cache for
 * the tokens cases sign themselves. Apart from the RSA keys, which are fresh each run, the pool is the same on every
 * run, so a seed replays the same cases byte for byte outside the signature segments.
 */
import { createHmac, generateKeyPairSync, KeyObject, sign, type JsonWebKey as NodeJwk } from 'node:crypto';
import {
  createTestEvent,
  createTestSigner,
  TEST_EVENT_TYPES,
  type TestEnvelope,
  type TestSigner,
} from '../test-kit.js';
import type { SecretKeyring } from '../src/verify/signature.js';
import type { ReferenceJwk } from './reference.js';

/** The receivers' fixed clock: 2026-11-22T12:00:00Z. */
export const FUZZ_NOW_MS = Date.UTC(2026, 10, 22, 12, 0, 0);
const NOW_S = FUZZ_NOW_MS / 1000;
const FIXED_ISO = '2026-11-22T12:00:00.000Z';
const LATER_ISO = '2026-11-29T12:00:00.000Z';

/** Key names a case can sign with; the first four are published in the JWKS. */
export type KeyName = 'main' | 'weak' | 'enc' | 'rs384' | 'stranger';
/** The kid each published key has; `stranger` signs under the main kid (a forgery). */
export const KIDS: Record<Exclude<KeyName, 'stranger'>, string> = {
  main: 'kyb-fuzz-main',
  weak: 'kyb-fuzz-weak-1024',
  enc: 'kyb-fuzz-use-enc',
  rs384: 'kyb-fuzz-alg-rs384',
};

/** Event types the spec does not know, one attested and one not: new types appear without notice (spec 9). */
export const UNKNOWN_ATTESTED_TYPE = 'kyb.future_thing.attested';
export const UNKNOWN_PLAIN_TYPE = 'kyb.future_thing.plain';

/** One genuine delivery of the pool. */
export interface PoolEntry {
  index: number;
  envelope: TestEnvelope;
  /** The serialized envelope, exactly the bytes the service would send. */
  text: string;
  body: Uint8Array;
  /** The signed claims of its attestation as ordered [name, raw JSON] pairs; empty when it carries none. */
  claims: [string, string][];
  /** The attestation's encoded JOSE header, when it carries one. */
  encodedHeader?: string;
}

/** See the file header. */
export interface FuzzWorld {
  nowMs: number;
  nowS: number;
  issuer: string;
  audience: string;
  leewaySeconds: number;
  /** The keyring as a receiver takes it: v1 ended a second ago, v2 is in its overlap, v3 is current. */
  receiverSecrets: SecretKeyring;
  referenceSecrets: Record<string, { secret: string; notAfterMs?: number }>;
  secretValues: Record<'1' | '2' | '3' | 'wrong', string>;
  jwks: { keys: ReferenceJwk[] };
  signer: TestSigner;
  pool: PoolEntry[];
  attested: PoolEntry[];
  /** HMAC header for exact bytes; `tText` is written and MACed as is. */
  hmac(body: Uint8Array, options?: { tText?: string; version?: string; secret?: string }): string;
  /** A compact JWS over the exact header and claims texts, cached. */
  signJws(headerText: string, payloadText: string, key: KeyName): string;
  /** The base64url RS256 signature of an exact signing input, cached. */
  signInput(signingInput: string, key: KeyName): string;
  /** The headers the service sends with `body`, as a Node-style record. */
  genuineHeaders(body: Uint8Array, eventId: string): Record<string, string>;
  /** A tokens' signature segments in play, so the log check can look for them. */
  tokenSignatures: string[];
}

/**
 * base64url of UTF-8 text or bytes.
 *
 * @example
 * ```ts
 * b64url('{"alg":"RS256"}') // 'eyJhbGciOiJSUzI1NiJ9'
 * ```
 */
export function b64url(input: string | Uint8Array): string {
  return Buffer.from(typeof input === 'string' ? Buffer.from(input, 'utf8') : input).toString('base64url');
}

/**
 * Raw JSON object text from ordered [name, raw JSON value] pairs, so values JSON.stringify cannot write fit.
 *
 * @example
 * ```ts
 * rawObject([['exp', '1e400'], ['exp', '5']]) // '{"exp":1e400,"exp":5}'
 * ```
 */
export function rawObject(entries: readonly (readonly [string, string])[]): string {
  return `{${entries.map(([name, value]) => `${JSON.stringify(name)}:${value}`).join(',')}}`;
}

/** A ULID that is the same on every run: the pool must not change between a failing run and its replay. */
function fixedUlid(n: number): string {
  return `01KA${String(n).padStart(22, '0')}`;
}

function deterministic(envelope: TestEnvelope, n: number): TestEnvelope {
  const streamId = `${envelope.stream_id.slice(0, envelope.stream_id.indexOf('_') + 1)}fuzz${String(n).padStart(4, '0')}`;
  const data: Record<string, unknown> = { ...envelope.data };
  for (const key of Object.keys(data)) {
    if (key === 'request_id') data[key] = streamId;
    else if (key.endsWith('_at')) data[key] = key === 'expires_at' ? LATER_ISO : FIXED_ISO;
    else if (key === 'digest') data[key] = `0x${'d1'.repeat(32)}`;
    else if (key === 'signature') data[key] = `0x${'5a'.repeat(65)}`;
  }
  return { ...envelope, event_id: fixedUlid(n), stream_id: streamId, seq: n % 3, timestamp: NOW_S, data };
}

function rsaKey(bits: number): { privateKey: KeyObject; publicKey: KeyObject } {
  return generateKeyPairSync('rsa', { modulusLength: bits });
}

/**
 * Builds the world: a test-kit signer (main key), three more published keys that must never verify (1024-bit,
 * `use: enc`, `alg: RS384`), an unpublished stranger key, the HMAC keyring and the pool of genuine deliveries.
 *
 * @example
 * ```ts
 * const world = await createFuzzWorld()
 * const token = world.signJws('{"alg":"RS256","kid":"kyb-fuzz-main","typ":"kyb-attestation+jwt"}', claimsText, 'main')
 * ```
 */
export async function createFuzzWorld(): Promise<FuzzWorld> {
  const secretValues = {
    '1': 'whsec_fuzz_v1_ended',
    '2': 'whsec_fuzz_v2_overlap',
    '3': 'whsec_fuzz_v3_current',
    wrong: 'whsec_fuzz_forged',
  };
  const signer = await createTestSigner({
    kid: KIDS.main,
    now: FUZZ_NOW_MS,
    secrets: { '1': secretValues['1'], '2': secretValues['2'], '3': secretValues['3'] },
    currentVersion: '3',
  });
  const keys: Record<KeyName, KeyObject> = {
    main: KeyObject.from(signer.key.privateKey),
    weak: rsaKey(1024).privateKey,
    enc: rsaKey(2048).privateKey,
    rs384: rsaKey(2048).privateKey,
    stranger: rsaKey(2048).privateKey,
  };
  const publicJwk = (name: Exclude<KeyName, 'main' | 'stranger'>, extra: Record<string, string>): ReferenceJwk => ({
    ...(keys[name].export({ format: 'jwk' }) as NodeJwk),
    d: undefined,
    p: undefined,
    q: undefined,
    dp: undefined,
    dq: undefined,
    qi: undefined,
    kid: KIDS[name],
    ...extra,
  });
  const stripPrivate = (jwk: ReferenceJwk): ReferenceJwk =>
    Object.fromEntries(Object.entries(jwk).filter(([, value]) => value !== undefined)) as ReferenceJwk;
  const jwks = {
    keys: [
      signer.jwks.keys[0] as ReferenceJwk,
      stripPrivate(publicJwk('weak', { alg: 'RS256', use: 'sig' })),
      stripPrivate(publicJwk('enc', { alg: 'RS256', use: 'enc' })),
      stripPrivate(publicJwk('rs384', { alg: 'RS384', use: 'sig' })),
    ],
  };

  const tokenSignatures: string[] = [];
  const signatureCache = new Map<string, string>();
  function signInput(signingInput: string, key: KeyName): string {
    const cacheKey = `${key}\n${signingInput}`;
    let signature = signatureCache.get(cacheKey);
    if (signature === undefined) {
      signature = sign('RSA-SHA256', Buffer.from(signingInput, 'latin1'), keys[key]).toString('base64url');
      // Bounded: a long run signs tens of thousands of distinct inputs, and old ones are rarely drawn again.
      if (signatureCache.size > 20_000) signatureCache.clear();
      signatureCache.set(cacheKey, signature);
    }
    return signature;
  }
  function signJws(headerText: string, payloadText: string, key: KeyName): string {
    const signingInput = `${b64url(headerText)}.${b64url(payloadText)}`;
    return `${signingInput}.${signInput(signingInput, key)}`;
  }
  function hmac(body: Uint8Array, options: { tText?: string; version?: string; secret?: string } = {}): string {
    const tText = options.tText ?? String(NOW_S);
    const version = options.version ?? '3';
    const secret = options.secret ?? secretValues[version as '3'] ?? secretValues['3'];
    const mac = createHmac('sha256', secret).update(`${tText}.`, 'latin1').update(body).digest('hex');
    return `t=${tText},v1=${mac},kv=${version}`;
  }
  function genuineHeaders(body: Uint8Array, eventId: string): Record<string, string> {
    return {
      'content-type': 'application/json',
      'service-kyb-signature': hmac(body),
      'service-event-id': eventId,
      'service-delivery-attempt': '1',
      'service-kyb-api-version': '2026-01-01',
      'user-agent': 'service-kyb-webhooks/1',
    };
  }

  const types: string[] = [...TEST_EVENT_TYPES, 'kyb.data_request.released', 'kyb.business.wallet_address_changed'];
  const envelopes: TestEnvelope[] = types.map((type, n) =>
    deterministic(createTestEvent(type as (typeof TEST_EVENT_TYPES)[number]), n + 1),
  );
  const unknownBase = deterministic(createTestEvent('kyb.data_request.refused'), 0);
  envelopes.push(
    {
      ...deterministic(createTestEvent('kyb.business.wallet_address_changed'), types.length + 1),
      event: UNKNOWN_ATTESTED_TYPE,
    },
    {
      ...unknownBase,
      event_id: fixedUlid(types.length + 2),
      event: UNKNOWN_PLAIN_TYPE,
      data: { request_id: unknownBase.stream_id, note: 'new type' },
    },
  );
  const pool: PoolEntry[] = [];
  for (const [index, envelope] of envelopes.entries()) {
    const attest =
      envelope.event === UNKNOWN_ATTESTED_TYPE ||
      envelope.event === 'kyb.data_request.released' ||
      envelope.event === 'kyb.business.wallet_address_changed';
    const delivery = await signer.sign(envelope, { attest });
    const token = delivery.envelope.attestation;
    let claims: [string, string][] = [];
    let encodedHeader: string | undefined;
    if (token) {
      const [header, payload, signature] = token.split('.') as [string, string, string];
      encodedHeader = header;
      tokenSignatures.push(signature);
      const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
      claims = Object.entries(decoded).map(([name, value]) => [name, JSON.stringify(value)]);
    }
    pool.push({
      index,
      envelope: delivery.envelope,
      text: delivery.text,
      body: delivery.body,
      claims,
      ...(encodedHeader ? { encodedHeader } : {}),
    });
  }

  return {
    nowMs: FUZZ_NOW_MS,
    nowS: NOW_S,
    issuer: signer.issuer,
    audience: signer.audience,
    leewaySeconds: 30,
    receiverSecrets: {
      '1': { secret: secretValues['1'], notAfter: FUZZ_NOW_MS - 1_000 },
      '2': { secret: secretValues['2'], notAfter: FUZZ_NOW_MS + 3_600_000 },
      '3': secretValues['3'],
    },
    referenceSecrets: {
      '1': { secret: secretValues['1'], notAfterMs: FUZZ_NOW_MS - 1_000 },
      '2': { secret: secretValues['2'], notAfterMs: FUZZ_NOW_MS + 3_600_000 },
      '3': { secret: secretValues['3'] },
    },
    secretValues,
    jwks,
    signer,
    pool,
    attested: pool.filter((entry) => entry.claims.length > 0),
    hmac,
    signJws,
    signInput,
    genuineHeaders,
    tokenSignatures,
  };
}
