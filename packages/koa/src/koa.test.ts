import { createServer } from 'node:http';
import { bodyParser } from '@koa/bodyparser';
import { createReceiver, type Receiver } from '@kyb-webhooks/core';
import { createTestSigner, testEvents, type TestSigner } from '@kyb-webhooks/testing';
import {
  runAdapterConformance,
  serveOnLoopback,
  type AdapterApp,
  type AdapterTestOptions,
} from '@kyb-webhooks/testing/adapter-suite';
import Koa, { type Middleware } from 'koa';
import koaBodyParser from 'koa-bodyparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kybWebhooks } from './index.js';

function start(receiver: Receiver, options: AdapterTestOptions = {}, ...before: Middleware[]): Promise<AdapterApp> {
  const app = new Koa();
  for (const middleware of before) app.use(middleware);
  app.use(kybWebhooks(receiver, { ...options, path: '/webhooks/kyb' }));
  return serveOnLoopback(createServer(app.callback()));
}

/** A JSON parser that keeps no raw text, like koa-body's default (`includeUnparsed: false`). */
const jsonWithoutRawBody: Middleware = async (ctx, next) => {
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
  ctx.request.body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  await next();
};

runAdapterConformance('koa', (receiver, options) => start(receiver, options), {
  startAppWithBodyParser: (receiver) => start(receiver, {}, jsonWithoutRawBody),
  startAppAfterAbort: (receiver, hooks) =>
    start(receiver, {}, async (ctx, next) => {
      await hooks.before(ctx.req); // e.g. an async auth step, during which the sender goes away
      try {
        await next();
        hooks.settled('resolved');
      } catch {
        hooks.settled('rejected'); // Koa would answer it, to nobody
      }
    }),
});

describe('koa specifics: a body parser mounted first', () => {
  let signer: TestSigner;
  let receiver: Receiver;
  const apps: AdapterApp[] = [];
  let handled: string[];
  beforeAll(async () => {
    signer = await createTestSigner();
    receiver = createReceiver({ secrets: { ...signer.secrets } });
    handled = [];
    receiver.onAny((event) => void handled.push(event.event_id));
    apps.push(await start(receiver, {}, bodyParser()), await start(receiver, {}, koaBodyParser()));
  });
  afterAll(() => Promise.all(apps.map((app) => app.close())));

  const parsers = [
    ['@koa/bodyparser', 0],
    ['koa-bodyparser', 1],
  ] as const;

  it.each(parsers)('accepts the byte-exact rawBody that %s kept, non-ASCII text included', async (_name, index) => {
    const envelope = testEvents.dataRequestRefused({ data: { note: 'Zoë — Ελλάδα — 株式会社 — 🦊' } });
    const { headers, body } = await signer.sign(envelope);
    const response = await fetch(apps[index]!.url, { method: 'POST', headers, body });
    expect(response.status).toBe(200);
    expect(handled).toContain(envelope.event_id);
  });

  it.each(parsers)('refuses a rawBody from %s that is not provably the signed bytes', async (_name, index) => {
    const url = apps[index]!.url;
    const envelope = testEvents.dataRequestRefused();
    const signed = await signer.sign(envelope);
    // Invalid UTF-8 inside a JSON string: the parser decodes it to U+FFFD and the bytes are gone.
    const [before, after] = JSON.stringify({ ...envelope, note: '<>' }).split('<>') as [string, string];
    const encoder = new TextEncoder();
    const withBytes = (bytes: number[]) =>
      signer.signBytes(Uint8Array.from([...encoder.encode(before), ...bytes, ...encoder.encode(after)]));
    const variants: { headers: Record<string, string>; body: Uint8Array<ArrayBuffer> }[] = [
      withBytes([0xff]),
      // a truncated 4-byte sequence decodes to one U+FFFD, which re-encodes to as many bytes: same length, other bytes
      withBytes([0xf0, 0x90, 0x80]),
      // declared in another charset: the parser decoded it as UTF-8 anyway
      { headers: { ...signed.headers, 'content-type': 'application/json; charset=iso-8859-1' }, body: signed.body },
    ];
    for (const { headers, body } of variants) {
      const response = await fetch(url, { method: 'POST', headers, body });
      expect(response.status).toBe(500);
      expect(await response.json()).toMatchObject({ error: { code: 'body_already_parsed' } });
    }
    expect(handled).not.toContain(envelope.event_id);
  });
});
