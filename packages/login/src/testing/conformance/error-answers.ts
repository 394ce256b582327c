/**
 * The routes' answers when the framework or the request fails: 500 internal_error when an answer cannot be written, 400
 * host_invalid when a path redirect URI meets a Host that is no host name.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOGIN_ERRORS, type KybLoginError } from '../../errors.js';
import { createLogin, type Login } from '../../login.js';
import { COOKIE_SECRET } from '../flow.js';
import { rawRequest, type ConformanceSuite } from './app.js';

export function errorAnswerCases(suite: ConformanceSuite): void {
  it('answers 500 internal_error, and keeps serving, when the framework refuses to write an answer', async () => {
    const { app } = suite;
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // A Set-Cookie value no HTTP stack writes (U+0101): the framework throws while writing the answer.
    const broken: Login = {
      ...app.login,
      start: async () => ({ url: new URL('https://login.example/'), setCookie: ['kyb-login-tx-x=\u0101'] }),
    };
    const errors: KybLoginError[] = [];
    try {
      await suite.mount(server, broken, { onError: (error) => void errors.push(error) });
      for (let i = 0; i < 2; i++) {
        const start = await fetch(`${origin}/auth/login`, { redirect: 'manual' });
        expect(start.status).toBe(500);
        expect(await start.json()).toEqual({ error: 'internal_error', message: LOGIN_ERRORS.internal_error.message });
        expect(start.headers.get('location')).toBeNull();
        expect(start.headers.getSetCookie()).toEqual([]);
      }
      expect(errors.map((error) => error.code)).toEqual(['internal_error', 'internal_error']);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  describe('with a path redirectUri, a request whose Host is no host name', () => {
    const server = createServer();
    const errors: KybLoginError[] = [];
    let origin: string;
    beforeAll(async () => {
      const { app } = suite;
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
      origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const login = await createLogin({
        authUrl: app.provider.issuer,
        clientId: app.provider.confidentialClient.clientId,
        clientSecret: app.provider.confidentialClient.clientSecret,
        redirectUri: '/auth/callback',
        trustProxy: true,
        audience: app.provider.audiences[0]!,
        secret: COOKIE_SECRET,
        allowInsecureRequests: true,
      });
      await suite.mount(server, login, { onError: (error) => void errors.push(error) });
    });
    afterAll(async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });

    it.each<[string, string, string, Record<string, string>]>([
      ['start', 'GET', '/auth/login', { host: 'shop_example.com' }],
      ['callback', 'GET', '/auth/callback?state=s&code=c', { host: 'shop_example.com' }],
      ['logout', 'POST', '/auth/logout', { host: 'shop_example.com' }],
      ['start (X-Forwarded-Host, trustProxy)', 'GET', '/auth/login', { 'x-forwarded-host': 'shop_example.com' }],
      [
        'callback (X-Forwarded-Host, trustProxy)',
        'GET',
        '/auth/callback?state=s&code=c',
        { 'x-forwarded-host': 'shop_example.com' },
      ],
      ['logout (X-Forwarded-Host, trustProxy)', 'POST', '/auth/logout', { 'x-forwarded-host': 'shop_example.com' }],
    ])('answers the %s route 400 host_invalid, as JSON and through onError', async (_name, method, path, headers) => {
      const before = errors.length;
      const answer = await rawRequest(origin, method, path, headers);
      expect(answer.status).toBe(400);
      expect(answer.contentType).toBe('application/json; charset=utf-8');
      expect(JSON.parse(answer.body)).toEqual({ error: 'host_invalid', message: LOGIN_ERRORS.host_invalid.message });
      expect(answer.setCookie).toEqual([]);
      expect(errors.slice(before).map((error) => error.code)).toEqual(['host_invalid']);
    });

    it.each<[string, Record<string, string>]>([
      ['Host', { host: 'shop_example.com' }],
      ['X-Forwarded-Host', { 'x-forwarded-host': 'shop_example.com' }],
    ])('answers a session-guarded page 400 host_invalid when the %s is no host name', async (_name, headers) => {
      const answer = await rawRequest(origin, 'GET', '/me', headers);
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body)).toEqual({ error: 'host_invalid', message: LOGIN_ERRORS.host_invalid.message });
    });
  });
}
