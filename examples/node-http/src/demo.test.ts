import { createReceiver } from '@kyb-webhooks/core';
import { runDemo } from '@kyb-webhooks/example-shared';
import { describe, expect, it } from 'vitest';
import { serveApp } from './serve.js';

describe('the plain Node example', () => {
  it('plays the demo scenario with the answers the README describes', async () => {
    const { rows, streams } = await runDemo('Node http', serveApp, 'memory', () => {});
    expect(rows.map((row) => [row.step, row.status, row.code])).toEqual([
      ['data request pending approval', 200, '—'],
      ['released with attestation (two directors)', 200, '—'],
      ['same release redelivered', 200, 'duplicate'],
      ['forged HMAC', 401, 'signature_mismatch'],
      ['release relabelled to another event_id', 401, 'attestation_relabelled'],
      ['attested event of an unknown type', 200, '—'],
      ['another data request refused', 200, '—'],
      ['signature request signed', 200, '—'],
      ['same release after an app restart', 200, '—'],
    ]);
    expect(rows[1]!.handler).toMatch(/directors: Jane Doe & Rahul Mehta/);
    expect([streams.events, streams.streams, streams.inOrder]).toEqual([9, 4, true]);
  });

  it('answers its own routes beside the webhook: /health, 404 elsewhere, 405 for a GET to the webhook', async () => {
    const app = await serveApp(createReceiver({ secrets: { '1': 'whsec_example' }, logger: false }));
    try {
      const health = await fetch(new URL('/health', app.url));
      expect([health.status, await health.json()]).toEqual([200, { ok: true }]);
      expect((await fetch(new URL('/other', app.url))).status).toBe(404);
      const get = await fetch(app.url);
      expect([get.status, get.headers.get('allow')]).toEqual([405, 'POST']);
    } finally {
      await app.close();
    }
  });
});
