// The optional start-up check of the attestation keys (receiver.checkAttestationKeys): what an operator sees at boot
// for a JWKS that answers, one that does not (the URL and the status named, never its query), an inline set, and a
// receiver with no attestation; and that the keys fetched by the check serve the first delivery.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, startJwksServer, testStream, type JwksServer, type TestSigner } from '../../test-kit.js';
import { KybWebhookError } from '../errors.js';
import { createReceiver } from '../receiver.js';

const SECRET = 'check-keys-secret';
let signer: TestSigner;
let server: JwksServer | undefined;
beforeAll(async () => {
  signer = await createTestSigner({ secrets: { '1': SECRET } });
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function receiverWith(jwksUrl: string) {
  return createReceiver({
    secrets: { '1': SECRET },
    logger: false,
    attestation: { issuer: signer.issuer, audience: signer.audience, jwksUrl },
  });
}

describe('receiver.checkAttestationKeys', () => {
  it('fetches the JWKS and says how many keys it holds; the first delivery then needs no fetch', async () => {
    server = await startJwksServer({ keys: [...signer.jwks.keys, ...(await createTestSigner()).jwks.keys] });
    const receiver = receiverWith(server.url);
    expect(await receiver.checkAttestationKeys()).toEqual({ keys: 2 });
    expect(server.requests).toBe(1);
    const [released] = testStream(['kyb.data_request.released']);
    const { headers, body } = await signer.sign(await signer.withAttestation(released!));
    expect((await receiver.receive({ method: 'POST', headers, body })).status).toBe(200);
    expect(server.requests).toBe(1);
  });

  it('rejects with jwks_unavailable naming the URL without its query, and the status', async () => {
    server = await startJwksServer(signer.jwks);
    server.setStatus(404);
    const receiver = receiverWith(`${server.url}?token=do-not-print`);
    const error = await receiver.checkAttestationKeys().then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(KybWebhookError);
    expect(error).toMatchObject({ code: 'jwks_unavailable' });
    const { message, detail } = error as KybWebhookError;
    expect(detail).toContain(server.url);
    expect(detail).toContain('HTTP 404');
    expect(`${message} ${detail}`).not.toContain('do-not-print');
  });

  it('rejects with jwks_unavailable for a JWKS host that does not answer', async () => {
    server = await startJwksServer(signer.jwks);
    const url = server.url;
    await server.close();
    server = undefined;
    await expect(receiverWith(url).checkAttestationKeys()).rejects.toMatchObject({ code: 'jwks_unavailable' });
  });

  it('counts an inline set without fetching anything', async () => {
    const receiver = createReceiver({
      secrets: { '1': SECRET },
      logger: false,
      attestation: { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
    });
    expect(await receiver.checkAttestationKeys()).toEqual({ keys: signer.jwks.keys.length });
  });

  it('is config_invalid on a receiver without attestation, saying what to configure', async () => {
    const receiver = createReceiver({ secrets: { '1': SECRET }, logger: false });
    await expect(receiver.checkAttestationKeys()).rejects.toMatchObject({
      code: 'config_invalid',
      message: expect.stringContaining('attestation: { issuer, audience, jwksUrl }'),
    });
  });
});
