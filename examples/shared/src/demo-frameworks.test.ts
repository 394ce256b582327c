import { describe, expect, it } from 'vitest';
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
