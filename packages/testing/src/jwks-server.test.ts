import { createLocalJWKSet, createRemoteJWKSet, jwtVerify } from 'jose';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { testEvents } from './fixtures.js';
import { KYB_JWKS_PATH, startJwksServer, type JwksServer } from './jwks-server.js';
import { createTestSigner, type TestSigner } from './signer.js';

let signer: TestSigner;
let rotated: TestSigner;
let server: JwksServer | undefined;

beforeAll(async () => {
  [signer, rotated] = await Promise.all([createTestSigner(), createTestSigner()]);
});

afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('startJwksServer', () => {
  it('serves the JWKS on 127.0.0.1 at /.well-known/kyb-jwks.json and counts the fetches', async () => {
    server = await startJwksServer(signer.jwks);
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\.well-known\/kyb-jwks\.json$/);
    expect(server.url).toBe(`${server.origin}${KYB_JWKS_PATH}`);
    expect(server.requests).toBe(0);
    const response = await fetch(server.url);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.json()).toEqual(signer.jwks);
    await fetch(server.url);
    expect(server.requests).toBe(2);
  });

  it('answers other paths with 404 without counting them', async () => {
    server = await startJwksServer(signer.jwks);
    expect((await fetch(`${server.origin}/.well-known/jwks.json`)).status).toBe(404);
    expect(server.requests).toBe(0);
  });

  it('works as a jose remote key set, which caches what it fetched', async () => {
    server = await startJwksServer(signer.jwks);
    const keys = createRemoteJWKSet(new URL(server.url));
    const token = await signer.attest(testEvents.dataRequestReleased());
    await jwtVerify(token, keys);
    await jwtVerify(token, keys);
    expect(server.requests).toBe(1);
  });

  it('rotates keys with setJwks and computes the set per request when given a function', async () => {
    let current = signer.jwks;
    server = await startJwksServer(() => current);
    expect((await (await fetch(server.url)).json()).keys[0].kid).toBe(signer.kid);
    current = rotated.jwks;
    expect((await (await fetch(server.url)).json()).keys[0].kid).toBe(rotated.kid);
    server.setJwks({ keys: [...signer.jwks.keys, ...rotated.jwks.keys] });
    const both = createLocalJWKSet(await (await fetch(server.url)).json());
    await expect(
      jwtVerify(await rotated.attest(testEvents.businessWalletAddressChanged()), both),
    ).resolves.toBeDefined();
  });

  it('simulates an outage with setStatus and recovers', async () => {
    server = await startJwksServer(signer.jwks);
    server.setStatus(503);
    expect((await fetch(server.url)).status).toBe(503);
    server.setStatus(200);
    expect((await fetch(server.url)).status).toBe(200);
    expect(server.requests).toBe(2);
  });
});
