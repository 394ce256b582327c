import {
  attestationClaims,
  signAttestation,
  signHs256WithPublicKey,
  signLoginToken,
  unsignedAttestation,
  type AttestOptions,
} from './attestation.js';
import { ATTESTED_TEST_EVENT_TYPES } from './event-types.js';
import { PLACEHOLDER_ATTESTATION_KID, TEST_API_VERSION, type TestEnvelope } from './fixtures.js';
import { signatureHeader } from './hmac.js';
import { generateAttestationKey, randomSecret, type AttestationKey, type Jwks } from './keys.js';
import { ulid } from './ulid.js';

/**
 * The attestation issuer a default signer uses ({attestation_issuer} of the spec).
 *
 * @example
 * ```ts
 * createReceiver({ attestation: { issuer: TEST_ISSUER, audience: TEST_AUDIENCE, jwksUrl } })
 * ```
 */
export const TEST_ISSUER = 'https://kyb.example.test';

/**
 * The merchant's client domain UUID a default signer puts in `aud`.
 *
 * @example
 * ```ts
 * expect(claims.aud).toBe(TEST_AUDIENCE)
 * ```
 */
export const TEST_AUDIENCE = '3b241101-e2bb-4255-8caf-4136c566a962';

/**
 * The login server's issuer, used only by {@link TestSigner.loginToken}.
 *
 * @example
 * ```ts
 * expect(decodeJwt(await signer.loginToken()).iss).toBe(TEST_LOGIN_ISSUER)
 * ```
 */
export const TEST_LOGIN_ISSUER = 'https://auth.kyb.example.test';

/**
 * Options of {@link createTestSigner}; every field has a default.
 *
 * @example
 * ```ts
 * const signer = await createTestSigner({ secrets: { '1': 'old', '2': 'new' }, currentVersion: '2', now: () => fixedMs })
 * ```
 */
export interface TestSignerOptions {
  /** Key id published in the JWKS; default a random `kyb-test-…` (or the kid of `key`). */
  kid?: string;
  /**
   * An existing attestation key (from {@link generateAttestationKey} or {@link importAttestationKey}) instead of a
   * fresh one, so tokens verify against a JWKS published before this signer was created.
   */
  key?: AttestationKey;
  /** Attestation `iss`; default {@link TEST_ISSUER}. */
  issuer?: string;
  /** Attestation `aud`; default {@link TEST_AUDIENCE}. */
  audience?: string;
  /** Endpoint secrets by version; default one random secret as version `'1'`. */
  secrets?: Record<string, string>;
  /** Version signed with by default; default the numerically highest key of `secrets`. */
  currentVersion?: string;
  /** Issuer of {@link TestSigner.loginToken}; default {@link TEST_LOGIN_ISSUER}. */
  loginIssuer?: string;
  /** Clock in Unix milliseconds, for `t`, `iat` and `exp`; a number pins it. Default `Date.now`. */
  now?: number | (() => number);
}

/**
 * Options of the HMAC header. Each lets a test produce one specific bad signature.
 *
 * @example
 * ```ts
 * signer.hmacHeader(body, { timestamp: nowSeconds - 301 })       // outside the 5-minute skew
 * signer.hmacHeader(body, { version: '9' })                      // unknown kv
 * signer.hmacHeader(body, { secret: 'whsec_forged' })             // forged MAC
 * ```
 */
export interface HmacOptions {
  /** `t` in Unix seconds; default the signer's clock. */
  timestamp?: number;
  /** `kv`; default {@link TestSigner.currentVersion}. */
  version?: string;
  /** Key for the MAC; default the secret of `version` (or of the current version when `version` is unknown). */
  secret?: string;
}

/**
 * Options of {@link TestSigner.sign}: the HMAC and attestation options plus what decides whether an attestation is
 * carried.
 *
 * @example
 * ```ts
 * await signer.sign(released, { attest: false })                       // attested type without attestation
 * await signer.sign(released, { attestation: await other.attest(released) }) // unknown kid
 * await signer.sign(pending, { attempt: 3 })
 * ```
 */
export interface SignOptions extends HmacOptions, AttestOptions {
  /**
   * `true` attests any type; `false` removes the attestation. Left out: attested types (spec §6) get a fresh one
   * unless the envelope already carries one, which is then kept as the service keeps it across retries.
   */
  attest?: boolean;
  /** A ready token to carry instead of signing one, e.g. from {@link TestSigner.unsignedToken}. */
  attestation?: string;
  /** Service-Delivery-Attempt; default 1. */
  attempt?: number;
}

/**
 * Options of {@link TestSigner.signBytes}.
 *
 * @example
 * ```ts
 * signer.signBytes('{not json', { eventId: ulid(), contentType: 'text/plain' })
 * ```
 */
export interface SignBytesOptions extends HmacOptions {
  eventId?: string;
  apiVersion?: string;
  attempt?: number;
  /** Default `application/json`. */
  contentType?: string;
}

/**
 * A delivery ready to POST: headers per spec 2.4 (lower-case names), the exact body bytes the MAC covers, the same
 * bytes as text, and the envelope that was serialized (with its attestation, if any).
 *
 * @example
 * ```ts
 * const { headers, body } = await signer.sign(envelope)
 * const result = await receiver.receive({ method: 'POST', headers, body })
 * ```
 */
export interface SignedDelivery {
  headers: Record<string, string>;
  body: Uint8Array<ArrayBuffer>;
  text: string;
  envelope: TestEnvelope;
}

/**
 * The service's signing side for tests: an RS256 attestation key published as a JWKS, versioned HMAC secrets, and
 * helpers that make every kind of bad delivery the receiver must reject.
 *
 * @example
 * ```ts
 * const signer = await createTestSigner()
 * const { headers, body } = await signer.sign(testEvents.dataRequestReleased())
 * ```
 */
export interface TestSigner {
  readonly kid: string;
  /** The public JWKS to serve at /.well-known/kyb-jwks.json: `{ keys: [{ kid, alg: 'RS256', use: 'sig', … }] }`. */
  readonly jwks: Jwks;
  readonly issuer: string;
  readonly audience: string;
  readonly loginIssuer: string;
  readonly secrets: Readonly<Record<string, string>>;
  readonly currentVersion: string;
  /** The key pair, for tests that build tokens by hand. */
  readonly key: AttestationKey;
  /** The signer's clock in Unix milliseconds. */
  now(): number;
  /** Serialize, attest when due (see {@link SignOptions.attest}), MAC and build the headers. */
  sign(envelope: TestEnvelope, options?: SignOptions): Promise<SignedDelivery>;
  /** The envelope as {@link sign} would serialize it: with a fresh, kept or removed attestation. */
  withAttestation(envelope: TestEnvelope, options?: SignOptions): Promise<TestEnvelope>;
  /** An RS256 attestation JWT for the envelope; released events carry their answers in it. */
  attest(envelope: TestEnvelope, options?: AttestOptions): Promise<string>;
  /** A Service-KYB-Signature value for exact bytes. */
  hmacHeader(body: string | Uint8Array, options?: HmacOptions): string;
  /** Headers for arbitrary bytes (not JSON, wrong content type …) signed correctly, so only the body is at fault. */
  signBytes(
    body: string | Uint8Array,
    options?: SignBytesOptions,
  ): { headers: Record<string, string>; body: Uint8Array<ArrayBuffer> };
  /** A login ID token (typ JWT, iss the login server, sub `svcid:0x…`) signed by this signer's key and kid. */
  loginToken(options?: { sub?: string; claims?: Record<string, unknown> }): Promise<string>;
  /** The envelope's correct attestation claims and header, but `alg: none` and no signature. */
  unsignedToken(envelope: TestEnvelope, options?: AttestOptions): Promise<string>;
  /** The envelope's correct claims as an HS256 token MACed with the public key's PEM (or JWK JSON) bytes. */
  hs256WithPublicKey(envelope: TestEnvelope, options?: AttestOptions & { keyFormat?: 'pem' | 'jwk' }): Promise<string>;
}

/**
 * Creates a {@link TestSigner} with a fresh RSA-2048 key (or the `key` and `secrets` you pass). For an attestation under a kid the receiver does not
 * know, create a second signer and use its {@link TestSigner.attest}.
 *
 * @example
 * ```ts
 * const signer = await createTestSigner({ now: () => Date.parse('2026-01-01T00:00:00Z') })
 * const jwksServer = await startJwksServer(signer.jwks)
 * const stranger = await createTestSigner() // its tokens carry an unknown kid
 * ```
 */
export async function createTestSigner(options: TestSignerOptions = {}): Promise<TestSigner> {
  if (options.key !== undefined && options.kid !== undefined && options.kid !== options.key.kid) {
    throw new TypeError(
      `createTestSigner: kid "${options.kid}" differs from the kid of key ("${options.key.kid}"); pass one of them.`,
    );
  }
  const key = options.key ?? (await generateAttestationKey(options.kid));
  const issuer = options.issuer ?? TEST_ISSUER;
  const audience = options.audience ?? TEST_AUDIENCE;
  const loginIssuer = options.loginIssuer ?? TEST_LOGIN_ISSUER;
  const secrets = Object.freeze({ ...(options.secrets ?? { '1': randomSecret() }) });
  const currentVersion = options.currentVersion ?? highestVersion(secrets);
  if (secrets[currentVersion] === undefined) throw new TypeError('currentVersion must name one of the secrets.');
  const clock = options.now;
  const now = typeof clock === 'number' ? () => clock : (clock ?? Date.now);
  const jwks: Jwks = { keys: [key.publicJwk] };

  function claimsFor(envelope: TestEnvelope, attestOptions: AttestOptions = {}) {
    return attestationClaims(envelope, { issuer, audience, nowMs: now() }, attestOptions);
  }

  function hmacHeader(body: string | Uint8Array, hmac: HmacOptions = {}): string {
    const version = hmac.version ?? currentVersion;
    // An unknown version still needs some key; the receiver must reject it before the MAC matters.
    const secret = hmac.secret ?? secrets[version] ?? (secrets[currentVersion] as string);
    return signatureHeader(body, { timestamp: hmac.timestamp ?? Math.floor(now() / 1000), version, secret });
  }

  function deliveryHeaders(
    body: Uint8Array,
    fields: HmacOptions & { eventId: string; apiVersion: string; attempt: number; contentType: string },
  ): Record<string, string> {
    return {
      'content-type': fields.contentType,
      'service-kyb-signature': hmacHeader(body, fields),
      'service-event-id': fields.eventId,
      'service-delivery-attempt': String(fields.attempt),
      'service-kyb-api-version': fields.apiVersion,
      'user-agent': 'service-kyb-webhooks/1',
    };
  }

  async function attest(envelope: TestEnvelope, attestOptions: AttestOptions = {}): Promise<string> {
    return signAttestation(claimsFor(envelope, attestOptions), key, attestOptions.header);
  }

  async function withAttestation(envelope: TestEnvelope, signOptions: SignOptions = {}): Promise<TestEnvelope> {
    const { attestation: _dropped, ...bare } = envelope;
    if (signOptions.attestation !== undefined) return { ...bare, attestation: signOptions.attestation };
    if (signOptions.attest === false) return bare;
    // Any attestation option means the test wants a token built from it, not the one already carried.
    const wantsFresh =
      signOptions.attest === true ||
      signOptions.claims !== undefined ||
      signOptions.header !== undefined ||
      signOptions.answers !== undefined ||
      signOptions.expiresInSeconds !== undefined;
    if (!wantsFresh && envelope.attestation !== undefined) return { ...envelope };
    if (!wantsFresh && !ATTESTED_TEST_EVENT_TYPES.has(envelope.event)) return bare;
    const claims = claimsFor(envelope, signOptions);
    const attestation = await signAttestation(claims, key, signOptions.header);
    return { ...describingToken(bare, signOptions.header?.kid ?? key.kid, claims.exp), attestation };
  }

  /**
   * A release's data names its attestation's kid and expiry (spec 6): a fixture's placeholder gets the token's own,
   * so the delivery is what the service sends. Values a test passed are kept, whatever they say.
   */
  function describingToken(envelope: TestEnvelope, kid: unknown, exp: unknown): TestEnvelope {
    if (envelope.event !== 'kyb.data_request.released' || envelope.data.attestation_kid !== PLACEHOLDER_ATTESTATION_KID)
      return envelope;
    return {
      ...envelope,
      data: {
        ...envelope.data,
        attestation_kid: kid,
        ...(typeof exp === 'number' ? { attestation_expires_at: new Date(exp * 1000).toISOString() } : {}),
      },
    };
  }

  return {
    kid: key.kid,
    jwks,
    issuer,
    audience,
    loginIssuer,
    secrets,
    currentVersion,
    key,
    now,
    hmacHeader,
    attest,
    withAttestation,

    async sign(envelope, signOptions = {}) {
      const carried = await withAttestation(envelope, signOptions);
      const text = JSON.stringify(carried);
      const body = new TextEncoder().encode(text);
      const headers = deliveryHeaders(body, {
        ...signOptions,
        eventId: carried.event_id,
        apiVersion: carried.api_version,
        attempt: signOptions.attempt ?? 1,
        contentType: 'application/json',
      });
      return { headers, body, text, envelope: carried };
    },

    signBytes(raw, bytesOptions = {}) {
      const body = typeof raw === 'string' ? new TextEncoder().encode(raw) : new Uint8Array(raw);
      const headers = deliveryHeaders(body, {
        ...bytesOptions,
        eventId: bytesOptions.eventId ?? ulid(),
        apiVersion: bytesOptions.apiVersion ?? TEST_API_VERSION,
        attempt: bytesOptions.attempt ?? 1,
        contentType: bytesOptions.contentType ?? 'application/json',
      });
      return { headers, body };
    },

    loginToken(loginOptions) {
      return signLoginToken(key, { loginIssuer, audience, nowMs: now() }, loginOptions);
    },

    async unsignedToken(envelope, attestOptions) {
      return unsignedAttestation(claimsFor(envelope, attestOptions), key.kid);
    },

    hs256WithPublicKey(envelope, attestOptions = {}) {
      return signHs256WithPublicKey(claimsFor(envelope, attestOptions), key, attestOptions.keyFormat);
    },
  };
}

/** Numeric versions compare as numbers ('10' after '9'); anything else falls back to string order. */
export function highestVersion(secrets: Readonly<Record<string, string>>): string {
  const versions = Object.keys(secrets);
  if (versions.length === 0) throw new TypeError('secrets must hold at least one version.');
  return versions.reduce((best, version) => (compareVersions(version, best) > 0 ? version : best));
}

function compareVersions(a: string, b: string): number {
  const numericA = Number(a);
  const numericB = Number(b);
  if (Number.isFinite(numericA) && Number.isFinite(numericB)) return numericA - numericB;
  return a < b ? -1 : a > b ? 1 : 0;
}
