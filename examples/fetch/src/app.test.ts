import { createTestSigner, startJwksServer, testEvents, type JwksServer, type TestSigner } from '@kyb-webhooks/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from './app.js';
import { exampleFromEnv, receiverFromEnv } from './config.js';

// The handler Bun.serve and Deno.serve run (scripts/runtimes/run.mjs starts both with a signed delivery), called here
// on Node with Web-standard Requests, as any fetch-style server calls it.
describe('the fetch example', () => {
  let signer: TestSigner;
  let jwks: JwksServer;
  let app: (request: Request) => Promise<Response>;
  const recorded: string[] = [];
  const url = 'http://127.0.0.1/webhooks/kyb';

  beforeAll(async () => {
    signer = await createTestSigner();
    jwks = await startJwksServer(signer.jwks);
    const env = {
      KYB_SECRET_V1: signer.secrets['1'],
      KYB_ATTESTATION_ISSUER: signer.issuer,
      KYB_AUDIENCE: signer.audience,
      KYB_JWKS_URL: jwks.url,
    };
    app = createApp(receiverFromEnv(env), (line) => recorded.push(line));
  });
  afterAll(() => jwks?.close());

  it('accepts an attested release, runs its handler once and acknowledges the redelivery as a duplicate', async () => {
    const envelope = testEvents.dataRequestReleased();
    const { headers, body } = await signer.sign(envelope);
    const first = await app(new Request(url, { method: 'POST', headers, body }));
    expect([first.status, await first.json()]).toEqual([200, { received: true }]);
    const again = await app(new Request(url, { method: 'POST', headers, body }));
    expect(await again.json()).toEqual({ received: true, code: 'duplicate' });
    expect(recorded.filter((line) => line.startsWith(`released ${envelope.data.request_id}:`))).toEqual([
      `released ${envelope.data.request_id}: 6 answers from 3 subjects`,
    ]);
  });

  it('refuses a forged delivery with 401 signature_mismatch and runs no handler', async () => {
    const envelope = testEvents.dataRequestRefused();
    const { headers, body } = await signer.sign(envelope, { secret: 'whsec_forged' });
    const response = await app(new Request(url, { method: 'POST', headers, body }));
    expect([response.status, await response.json()]).toMatchObject([401, { error: { code: 'signature_mismatch' } }]);
    expect(recorded.some((line) => line.includes(String(envelope.data.request_id)))).toBe(false);
  });

  it('in queue mode (KYB_QUEUE=memory) answers 200 queued, and the worker then runs the handler once', async () => {
    const lines: string[] = [];
    const example = exampleFromEnv({
      KYB_SECRET_V1: signer.secrets['1'],
      KYB_ATTESTATION_ISSUER: signer.issuer,
      KYB_AUDIENCE: signer.audience,
      KYB_JWKS_URL: jwks.url,
      KYB_QUEUE: 'memory',
    });
    const queued = createApp(example.receiver, (line) => lines.push(line));
    const envelope = testEvents.dataRequestRefused();
    const { headers, body } = await signer.sign(envelope);
    const answer = await queued(new Request(url, { method: 'POST', headers, body }));
    expect([answer.status, await answer.json()]).toEqual([200, { received: true, code: 'queued' }]);
    expect(lines).toEqual([]);
    await example.startWorker();
    await expect.poll(() => lines).toEqual([`refused ${envelope.data.request_id}: ${envelope.data.reason}`]);
    const again = await queued(new Request(url, { method: 'POST', headers, body }));
    expect(await again.json()).toEqual({ received: true, code: 'duplicate' });
  });

  it('serves /health and answers 404 elsewhere', async () => {
    expect((await app(new Request('http://127.0.0.1/health'))).status).toBe(200);
    expect((await app(new Request('http://127.0.0.1/other'))).status).toBe(404);
  });

  it.each<[string, Record<string, string>, string]>([
    ['no secret', {}, 'Set KYB_SECRET_V1'],
    [
      'only part of the attestation settings',
      { KYB_SECRET_V1: 'whsec_x', KYB_AUDIENCE: 'merchant' },
      'set KYB_ATTESTATION_ISSUER and KYB_JWKS_URL too',
    ],
    [
      'an unknown queue',
      { KYB_SECRET_V1: 'whsec_x', KYB_QUEUE: 'sqs' },
      'KYB_QUEUE=sqs is not a queue of this example',
    ],
  ])('refuses to start with %s, saying what to set', (_name, env, message) => {
    expect(() => receiverFromEnv(env)).toThrow(message);
  });
});
