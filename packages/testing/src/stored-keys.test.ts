import { createReceiver } from '@kyb-webhooks/core';
import { describe, expect, it } from 'vitest';
import { testEvents } from './fixtures.js';
import { exportAttestationKey, generateAttestationKey, importAttestationKey } from './keys.js';
import { createTestSigner } from './signer.js';

describe('a signer on stored keys and secrets', () => {
  it("signs deliveries that a receiver configured from an earlier signer's JWKS and secrets accepts", async () => {
    const first = await createTestSigner({ kid: 'kyb-dev', secrets: { '1': 'whsec_dev' } });
    const stored = JSON.parse(JSON.stringify({ key: await exportAttestationKey(first.key), secrets: first.secrets }));
    const receiver = createReceiver({
      secrets: first.secrets,
      attestation: { issuer: first.issuer, audience: first.audience, jwks: first.jwks },
    });
    // A later process: the same key and secrets, read back from storage.
    const again = await createTestSigner({ key: await importAttestationKey(stored.key), secrets: stored.secrets });
    const { headers, body } = await again.sign(testEvents.dataRequestReleased());
    const result = await receiver.receive({ method: 'POST', headers, body });
    expect({ status: result.status, code: result.code }).toEqual({ status: 200, code: undefined });
    expect(again.jwks).toEqual(first.jwks);
  });

  it('keeps the kid of the stored key, or takes the one given', async () => {
    const key = await generateAttestationKey('kyb-dev-1');
    const jwk = await exportAttestationKey(key);
    expect((await importAttestationKey(jwk)).kid).toBe('kyb-dev-1');
    expect((await importAttestationKey(jwk, 'kyb-dev-2')).publicJwk).toMatchObject({
      kid: 'kyb-dev-2',
      alg: 'RS256',
      use: 'sig',
    });
  });

  it('publishes no private member of the key in the JWKS', async () => {
    const signer = await createTestSigner({
      key: await importAttestationKey(await exportAttestationKey(await generateAttestationKey('k'))),
    });
    expect(Object.keys(signer.jwks.keys[0]!).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use']);
  });

  it.each([
    ['a public JWK', async () => (await generateAttestationKey('k')).publicJwk, /private RSA JWK/],
    ['an EC key', async () => ({ kty: 'EC', crv: 'P-256', x: 'a', y: 'b', d: 'c', kid: 'k' }), /private RSA JWK/],
    [
      'a key without kid',
      async () => ({ ...(await exportAttestationKey(await generateAttestationKey('k'))), kid: undefined }),
      /no kid/,
    ],
  ])('refuses %s with the fix in the message', async (_what, make, message) => {
    await expect(importAttestationKey((await make()) as never)).rejects.toThrow(message);
  });

  it('refuses a kid that differs from the key it is given', async () => {
    const key = await generateAttestationKey('kyb-a');
    await expect(createTestSigner({ key, kid: 'kyb-b' })).rejects.toThrow(/differs from the kid of key/);
  });
});
