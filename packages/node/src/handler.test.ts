import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { createReceiver, type Receiver } from '@kyb-webhooks/core';
import { createTestSigner, testEvents } from '@kyb-webhooks/testing';
import {
  runAdapterConformance,
  runAdapterOptionCases,
  serveOnLoopback,
  type AdapterTestOptions,
} from '@kyb-webhooks/testing/adapter-suite';
import { describe, expect, it } from 'vitest';
import { kybWebhooks } from './index.js';

type Before = (req: IncomingMessage & { body?: unknown }) => Promise<void>;

/** http.createServer with the handler on /webhooks/kyb (any method), after `before` (a body parser, …). */
function start(receiver: Receiver, options: AdapterTestOptions = {}, before?: Before) {
  const webhooks = kybWebhooks(receiver, options);
  return serveOnLoopback(
    createServer(async (req: IncomingMessage, res: ServerResponse) => {
      if (req.url !== '/webhooks/kyb') return void res.writeHead(404).end();
      if (before) await before(req);
      await webhooks(req, res);
    }),
  );
}

async function readAll(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** What Next.js pages routes do by default (`bodyParser` on): the stream is read and req.body is the parsed JSON. */
const nextDefaultBodyParser: Before = async (req) => {
  req.body = JSON.parse((await readAll(req)).toString('utf8'));
};

runAdapterConformance('node (req, res) handler', (receiver, options) => start(receiver, options), {
  startAppWithBodyParser: (receiver) => start(receiver, {}, nextDefaultBodyParser),
  startAppAfterAbort: (receiver, hooks) => {
    const webhooks = kybWebhooks(receiver);
    return serveOnLoopback(
      createServer(async (req, res) => {
        await hooks.before(req); // e.g. an async auth step, during which the sender goes away
        webhooks(req, res).then(
          () => hooks.settled('resolved'),
          () => hooks.settled('rejected'),
        );
      }),
    );
  },
});

runAdapterOptionCases('kybWebhooks (@kyb-webhooks/node)', (receiver, options) => kybWebhooks(receiver, options), {
  invalid: [
    ['an option of another adapter', { path: '/webhooks/kyb' }, ['`path` is not an option; the options are onResult.']],
  ],
});

describe('node handler specifics', () => {
  it('accepts a raw Buffer another layer already read into req.body (micro-style)', async () => {
    const signer = await createTestSigner();
    const receiver = createReceiver({ secrets: { ...signer.secrets } });
    const handled: string[] = [];
    receiver.onAny((event) => void handled.push(event.event_id));
    const app = await start(receiver, {}, async (req) => {
      req.body = await readAll(req);
    });
    try {
      const envelope = testEvents.dataRequestRefused({ data: { note: 'Zoë 🦊' } });
      const { headers, body } = await signer.sign(envelope);
      const response = await fetch(app.url, { method: 'POST', headers, body });
      expect(response.status).toBe(200);
      expect(handled).toEqual([envelope.event_id]);
    } finally {
      await app.close();
    }
  });

  it('keeps headers set before it and answers JSON with Content-Length', async () => {
    const signer = await createTestSigner();
    const receiver = createReceiver({ secrets: { ...signer.secrets } });
    const webhooks = kybWebhooks(receiver);
    const app = await serveOnLoopback(
      createServer((req, res) => {
        res.setHeader('x-request-id', 'abc-123');
        void webhooks(req, res);
      }),
    );
    try {
      const { headers, body } = await signer.sign(testEvents.dataRequestRefused());
      const response = await fetch(app.url, { method: 'POST', headers, body });
      expect(response.headers.get('x-request-id')).toBe('abc-123');
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      const text = await response.text();
      expect(response.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
      expect(JSON.parse(text)).toEqual({ received: true });
    } finally {
      await app.close();
    }
  });

  it('settles its promise without an answer when the sender goes away mid-body, and the server keeps serving', async () => {
    const signer = await createTestSigner();
    const receiver = createReceiver({ secrets: { ...signer.secrets } });
    const webhooks = kybWebhooks(receiver);
    const settled: string[] = [];
    const app = await serveOnLoopback(
      createServer((req, res) => {
        webhooks(req, res).then(
          () => settled.push('resolved'),
          () => settled.push('rejected'),
        );
      }),
    );
    try {
      const { port } = new URL(app.url);
      await new Promise<void>((resolve) => {
        const socket = connect(Number(port), '127.0.0.1', () => {
          socket.write(
            'POST /webhooks/kyb HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"event":',
          );
          setTimeout(() => {
            socket.destroy();
            resolve();
          }, 50);
        });
      });
      await expect.poll(() => settled).toEqual(['resolved']);
      const { headers, body } = await signer.sign(testEvents.dataRequestRefused());
      expect((await fetch(app.url, { method: 'POST', headers, body })).status).toBe(200);
    } finally {
      await app.close();
    }
  });
});
