import { createPrivateKey, sign as rsaSign, type KeyObject } from 'node:crypto';
import {
  ATTESTATION_TYP,
  ATTESTED_TEST_EVENT_TYPES,
  createTestSigner,
  type AttestOptions,
  type Jwks,
  type SignOptions,
  type SignedDelivery,
  type TestEnvelope,
  type TestSigner,
} from '@kyb-webhooks/testing';
import type { DevKeys } from './dev-keys.js';

/**
 * The test kit's signer, bound to the stable development keys: HMAC headers with the file's secrets, attestations
 * signed by the file's RSA key under its kid, and the JWKS that publishes that key.
 *
 * @example
 * ```ts
 * const signer = await createDevSigner(keys)
 * const delivery = await signer.sign(testEvents.dataRequestReleased()) // attested by the dev key
 * ```
 */
export interface DevSigner {
  readonly kit: TestSigner;
  readonly jwks: Jwks;
  /** A correct attestation for the envelope (its claims built by the test kit), signed by the dev key. */
  attest(envelope: TestEnvelope, options?: AttestOptions): Promise<string>;
  /** The envelope as it is sent: attested types (or `attest: true`) carry a dev-key attestation. */
  withAttestation(envelope: TestEnvelope, options?: SignOptions): Promise<TestEnvelope>;
  /** Headers and exact bytes of a delivery, signed like the service signs them. */
  sign(envelope: TestEnvelope, options?: SignOptions): Promise<SignedDelivery>;
}

/**
 * Creates a {@link DevSigner}. The kit's signer makes its own key; only its claims are used, and the token is signed
 * here with the dev key, so the app's cached JWKS stays valid across CLI runs.
 *
 * @example
 * ```ts
 * const signer = await createDevSigner(loadOrCreateDevKeys().keys, { version: '1' })
 * ```
 */
export async function createDevSigner(keys: DevKeys, options: { version?: string } = {}): Promise<DevSigner> {
  const kit = await createTestSigner({
    kid: keys.kid,
    issuer: keys.issuer,
    audience: keys.audience,
    secrets: keys.secrets,
    currentVersion: options.version ?? keys.currentVersion,
  });
  const privateKey = createPrivateKey(keys.privateKeyPem);

  async function attest(envelope: TestEnvelope, attestOptions: AttestOptions = {}): Promise<string> {
    // The kit's unsigned token carries exactly the claims the kit would sign (ids, answers, iat/exp, overrides).
    const unsigned = await kit.unsignedToken(envelope, attestOptions);
    const payload = unsigned.split('.')[1] as string;
    return signJwt(payload, { typ: ATTESTATION_TYP, alg: 'RS256', kid: keys.kid, ...attestOptions.header }, privateKey);
  }

  async function withAttestation(envelope: TestEnvelope, signOptions: SignOptions = {}): Promise<TestEnvelope> {
    if (signOptions.attestation !== undefined || signOptions.attest === false) return kit.withAttestation(envelope, signOptions);
    // The kit's rule: an attestation option asks for a fresh token; otherwise a carried one is kept (as the service
    // keeps it across retries) and attested types without one get one.
    const wantsFresh =
      signOptions.attest === true ||
      signOptions.claims !== undefined ||
      signOptions.header !== undefined ||
      signOptions.answers !== undefined ||
      signOptions.expiresInSeconds !== undefined;
    if (!wantsFresh && (envelope.attestation !== undefined || !ATTESTED_TEST_EVENT_TYPES.has(envelope.event))) {
      return kit.withAttestation(envelope, signOptions);
    }
    return kit.withAttestation(envelope, { ...signOptions, attestation: await attest(envelope, signOptions) });
  }

  return {
    kit,
    jwks: { keys: [keys.publicJwk] },
    attest,
    withAttestation,
    async sign(envelope, signOptions = {}) {
      const carried = await withAttestation(envelope, signOptions);
      const { attestation } = carried;
      return kit.sign(carried, attestation === undefined ? { ...signOptions, attest: false } : { ...signOptions, attestation });
    },
  };
}

function signJwt(payload: string, header: Record<string, unknown>, key: KeyObject): string {
  const cleanHeader = Object.fromEntries(Object.entries(header).filter(([, value]) => value !== undefined));
  const input = `${Buffer.from(JSON.stringify(cleanHeader)).toString('base64url')}.${payload}`;
  return `${input}.${rsaSign('sha256', Buffer.from(input), key).toString('base64url')}`;
}
