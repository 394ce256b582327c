import { describe, expect, it } from 'vitest';
import { explainFailure } from './commands/send.js';
import { generateKeyPairSync } from 'node:crypto';
import type { DevKeys } from './dev-keys.js';
import { createDevSigner } from './dev-signer.js';
import { createPoster } from './post.js';
import { testEvents } from '@kyb-webhooks/testing';

describe('a request fetch refuses before sending', () => {
  it('is reported as not sent, with the fix, not as a server that does not answer', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const keys: DevKeys = {
      version: 1,
      kid: 'kyb-dev-test',
      issuer: 'https://kyb.example.test',
      audience: 'test',
      privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      publicJwk: { ...publicKey.export({ format: 'jwk' }), kid: 'kyb-dev-test', alg: 'RS256', use: 'sig' },
      secrets: { '1': 'whsec_test_1', '2': 'whsec_test_2' },
      currentVersion: '2',
      previousVersion: '1',
      jwksPort: 4479,
    };
    const signer = await createDevSigner(keys);
    // Port 9 (discard) on loopback: had the request gone out, this would be a network error.
    const post = createPoster('http://127.0.0.1:9/webhooks/kyb', signer, 2000);
    const delivery = await signer.sign(testEvents.dataRequestRefused());
    const sent = await post({ ...delivery, headers: { ...delivery.headers, 'x-note': 'one\ntwo' } });
    expect(sent.status).toBeNull();
    expect(explainFailure(sent, 'http://127.0.0.1:9/webhooks/kyb')).toBe(
      '\u2717 not sent: fetch refuses its URL or one of its headers (a header name that is not an HTTP token, or a value with a line break); fix the headers of the capture',
    );
  });
});
