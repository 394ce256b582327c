/**
 * A2: the attestation check (spec 5.5) against a raw RS256 signature check of the same token and against plain
 * jose jwtVerify.
 */
import { createPublicKey, verify } from 'node:crypto';
import { createAttestationVerifier, type EnvelopeIdentity } from '@kyb-webhooks/core';
import type { TestSigner } from '@kyb-webhooks/testing';
import { jwtVerify } from 'jose';
import { platformCrypto as webCrypto } from '../../../packages/core/src/verify/crypto/web.js';
import { benchEvent, benchNow } from '../fixtures.js';
import type { Candidate } from '../harness.js';

export const ATTESTATION_NAMES = {
  baseline: "raw crypto.verify('RSA-SHA256') of the token (baseline)",
  ours: 'ours: createAttestationVerifier (node:crypto)',
  web: 'ours on the Web path: Web Crypto signature, our claim rules (info)',
  jose: 'jose jwtVerify (Web Crypto)',
} as const;

export async function attestationCandidates(
  signer: TestSigner,
): Promise<{ candidates: Candidate[]; tokenBytes: number }> {
  const envelope = await signer.withAttestation(benchEvent('attested'));
  const token = envelope.attestation!;
  const identity: EnvelopeIdentity = envelope as unknown as EnvelopeIdentity;
  const options = { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks };
  const ours = createAttestationVerifier(options, benchNow);
  const web = createAttestationVerifier(options, benchNow, webCrypto);
  const publicKeyObject = createPublicKey({
    key: signer.key.publicJwk as import('node:crypto').JsonWebKey,
    format: 'jwk',
  });
  const currentDate = new Date(benchNow());

  const baseline = (): boolean => {
    // Only the signature: split, decode, verify. No header, key lookup or claim checks.
    const dot = token.lastIndexOf('.');
    const signingInput = Buffer.from(token.slice(0, dot));
    const signature = Buffer.from(token.slice(dot + 1), 'base64url');
    if (!verify('RSA-SHA256', signingInput, publicKeyObject, signature)) throw new Error('bad signature');
    return true;
  };

  const candidates: Candidate[] = [
    { name: ATTESTATION_NAMES.baseline, fn: baseline },
    { name: ATTESTATION_NAMES.ours, async: true, fn: () => ours(token, identity) },
    { name: ATTESTATION_NAMES.web, async: true, fn: () => web(token, identity) },
    {
      name: ATTESTATION_NAMES.jose,
      async: true,
      fn: () =>
        jwtVerify(token, signer.key.publicKey, {
          issuer: signer.issuer,
          audience: signer.audience,
          algorithms: ['RS256'],
          currentDate,
        }),
    },
  ];
  return { candidates, tokenBytes: token.length };
}
