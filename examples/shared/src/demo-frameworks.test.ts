import { createReceiver } from '@kyb-webhooks/core';
import { describe, expect, it } from 'vitest';
import { serveApp as serveExpress } from '../../express/src/serve.js';
import { serveApp as serveFastify } from '../../fastify/src/serve.js';
import { serveApp as serveHono } from '../../hono/src/serve.js';
import { serveApp as serveKoa } from '../../koa/src/serve.js';
import { runDemo } from './demo.js';

// `npm run demo -- fastify` and `-- koa` are README commands too: the same answers as the Express demo (whose test
// checks every row in detail), through each framework's example app.
describe.each([
  ['Fastify', serveFastify],
  ['Koa', serveKoa],
  ['Hono', serveHono],
] as const)('the demo on %s', (framework, serve) => {
  it('answers every delivery as the README shows and keeps every stream complete and in order', async () => {
    const { rows, streams } = await runDemo(framework, serve, 'memory', () => {});
    expect(rows.map((row) => `${row.status} ${row.code}`)).toEqual([
      '200 —',
      '200 —',
      '200 duplicate',
      '401 signature_mismatch',
      '401 attestation_relabelled',
      '200 —',
      '200 —',
      '200 —',
      '200 —',
    ]);
    expect(streams.rows.map((row) => row.code)).toEqual([
      '—',
      'service gave up after 3 attempts',
      'seq 1 backfilled from the API',
      '—',
      'endpoint quarantined',
      '6 events queued',
      '6 events replayed',
      ...Array.from({ length: 6 }, () => 'replayed'),
      '6 deliveries, 6 duplicate',
    ]);
    expect(streams.inOrder).toBe(true);
  });
});

// A GET to the webhook says the method is wrong, not the path: a 404 sends a newcomer looking for a typo in the URL.
describe.each([
  ['Express', serveExpress],
  ['Fastify', serveFastify],
  ['Koa', serveKoa],
  ['Hono', serveHono],
] as const)('the %s example app', (_framework, serve) => {
  it('answers a GET to the webhook 405 with Allow: POST', async () => {
    const app = await serve(createReceiver({ secrets: { '1': 'whsec_example' }, logger: false }));
    try {
      const get = await fetch(app.url);
      expect([get.status, get.headers.get('allow')]).toEqual([405, 'POST']);
    } finally {
      await app.close();
    }
  });
});
