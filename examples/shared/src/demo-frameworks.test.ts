import { createReceiver } from '@kyb-webhooks/core';
import { describe, expect, it } from 'vitest';
import { serveApp as serveExpress } from '../../express/src/serve.js';
import { serveApp as serveFastify } from '../../fastify/src/serve.js';
import { serveApp as serveHono } from '../../hono/src/serve.js';
import { serveApp as serveKoa } from '../../koa/src/serve.js';
import { serveApp as serveNodeHttp } from '../../node-http/src/serve.js';
import { runDemo } from './demo.js';
import { queueFlag } from './queue.js';

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

// `npm run demo -- <framework> --queue` (and `npm run example -- <framework> --queue`): the same app with the receiver
// in queue mode and a worker in the process, on the memory queue. Every verified delivery is answered `200 queued`,
// and the worker then runs each event's handlers once, in seq order per stream.
describe.each([
  ['Express', serveExpress],
  ['Fastify', serveFastify],
  ['Koa', serveKoa],
  ['Hono', serveHono],
  ['Node http', serveNodeHttp],
] as const)('the --queue demo on %s', (framework, serve) => {
  it('answers 200 queued, then the worker runs each handler once, every stream complete and in seq order', async () => {
    const printed: string[] = [];
    const { rows, streams, jobs } = await runDemo(framework, serve, { queue: 'memory' }, (text) => printed.push(text));
    expect(rows.map((row) => `${row.status} ${row.code}`)).toEqual([
      '200 queued',
      '200 queued',
      '200 duplicate', // the queue holds the event already: nothing enqueued, nothing run
      '401 signature_mismatch',
      '401 attestation_relabelled',
      '200 queued',
      '200 queued',
      '200 queued',
      '200 queued', // after the restart: a new memory queue, a new memory store
    ]);
    // Read once the queue drained: what the worker ran for each queued delivery, and nothing for the others.
    expect(rows.map((row) => row.handler !== '—')).toEqual([true, true, false, false, false, true, true, true, true]);
    expect(rows[1]!.handler).toMatch(/directors: Jane Doe & Rahul Mehta/);
    expect(rows[8]!.handler).toBe(rows[1]!.handler);
    // The handlers ran in the worker (context.job set), once per queued event: the release twice, once per process,
    // as the restart lost the memory store.
    expect(jobs).toHaveLength(6);
    expect(new Set(jobs).size).toBe(5);
    expect(streams.rows.map((row) => `${row.status ?? '—'} ${row.code}`)).toEqual([
      '200 queued',
      '— service gave up after 3 attempts',
      '— seq 1 backfilled from the API',
      '200 queued',
      '— endpoint quarantined',
      '— 6 events queued',
      '— 6 events replayed',
      ...Array.from({ length: 6 }, () => '— replayed'),
      '— 6 deliveries, 6 duplicate',
    ]);
    expect(streams.rows.slice(0, 4).map((row) => row.handler)).toEqual([
      'replaced wallet 0x1111aa… (no alias kept)',
      '—',
      'replaced wallet 0x2222bb… (no alias kept)',
      'replaced wallet 0x3333cc… (no alias kept)',
    ]);
    expect([streams.events, streams.streams, streams.inOrder]).toEqual([9, 4, true]);
    const output = printed.join('\n');
    expect(output).toContain('in queue mode: the memory queue, a worker in this process');
    expect(output).toContain('what the worker then ran');
    expect(output).toContain('The memory queue is NOT durable');
  });
});

describe('the --queue demo with the SQLite store', () => {
  it('queues the release again after the restart, and the worker finds it processed: its handler does not run', async () => {
    const { rows, jobs } = await runDemo('Express', serveExpress, { store: 'sqlite', queue: 'memory' }, () => {});
    expect([rows[8]!.status, rows[8]!.code, rows[8]!.handler]).toEqual([200, 'queued', '—']);
    expect(new Set(jobs).size).toBe(jobs.length);
  });
});

describe('the --queue flag', () => {
  it.each([
    [['express'], undefined],
    [['express', '--queue'], 'memory'],
    [['--queue=memory', 'sqlite'], 'memory'],
    [['koa', '--queue=pgboss'], 'pgboss'],
    [['--queue=bullmq'], 'bullmq'],
  ] as const)('%j runs with %s', (args, engine) => {
    expect(queueFlag(args)).toBe(engine);
  });

  it('refuses an engine it does not know, naming the ones it does', () => {
    expect(() => queueFlag(['--queue=sqs'])).toThrow(
      'Unknown queue engine "sqs": use --queue (the memory queue, in this process), --queue=pgboss (with DATABASE_URL) or --queue=bullmq (with REDIS_URL).',
    );
  });
});
