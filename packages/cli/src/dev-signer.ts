import { createPrivateKey } from 'node:crypto';
import {
  createTestSigner,
  importAttestationKey,
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
 * Creates a {@link DevSigner}: the kit's signer on the dev key and secrets of the keys file, so the app's cached JWKS
 * stays valid across CLI runs.
 *
 * @example
 * ```ts
 * const signer = await createDevSigner(loadOrCreateDevKeys().keys, { version: '1' })
 * ```
 */
export async function createDevSigner(keys: DevKeys, options: { version?: string } = {}): Promise<DevSigner> {
  // The kit's signer on the file's key: node:crypto reads the stored PEM, the kit imports it as a JWK.
  const privateJwk = createPrivateKey(keys.privateKeyPem).export({ format: 'jwk' });
  const kit = await createTestSigner({
    key: await importAttestationKey(privateJwk, keys.kid),
    issuer: keys.issuer,
    audience: keys.audience,
    secrets: keys.secrets,
    currentVersion: options.version ?? keys.currentVersion,
  });
  return {
    kit,
    jwks: kit.jwks,
    attest: (envelope, attestOptions) => kit.attest(envelope, attestOptions),
    withAttestation: (envelope, signOptions) => kit.withAttestation(envelope, signOptions),
    sign: (envelope, signOptions) => kit.sign(envelope, signOptions),
  };
}
