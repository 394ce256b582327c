/**
 * The aborted-request case of the adapter conformance suite: a sender that goes away mid-body while an asynchronous
 * step runs before the adapter (an auth or rate-limit middleware). By the time the adapter starts, Node has already
 * destroyed the request and emitted its 'error' and 'close'; an adapter that waits for the body's 'end' waits forever,
 * holding the request in memory and never calling the framework back.
 */
import { connect } from 'node:net';
import { createReceiver, type Receiver } from '@kyb-webhooks/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testEvents } from '../fixtures.js';
import { createTestSigner, type TestSigner } from '../signer.js';
import type { AdapterApp } from './index.js';

/**
 * What the suite hands the start function of the aborted-request case.
 *
 * @example
 * ```ts
 * app.use(async (req, res, next) => { await hooks.before(req); next() })
 * app.all('/webhooks/kyb', kybWebhooks(receiver))
 * app.use((error, req, res, next) => hooks.settled('next(error)'))
 * ```
 */
export interface AbortedRequestHooks {
  /**
   * Await it in a middleware before the adapter, with Node's request: it resolves once the request is closed (the
   * sender went away) or after 250 ms (a sender that stayed), so the adapter starts after the abort.
   */
  before(req: { once(event: 'close', listener: () => void): unknown }): Promise<void>;
  /**
   * Call it once the adapter is done with a request, however it ended: its promise resolved or rejected, or the
   * framework's error handler ran.
   */
  settled(how: string): void;
}

/**
 * Starts an app (see `StartAdapterApp`) whose middleware awaits `hooks.before(req)` before the adapter, and reports
 * through `hooks.settled` when the adapter is done with each request.
 *
 * @example
 * ```ts
 * const startAppAfterAbort: StartAppAfterAbort = async (receiver, hooks) => {
 *   const webhooks = kybWebhooks(receiver)
 *   return serveOnLoopback(createServer(async (req, res) => {
 *     await hooks.before(req)
 *     webhooks(req, res).then(() => hooks.settled('resolved'), () => hooks.settled('rejected'))
 *   }))
 * }
 * ```
 */
export type StartAppAfterAbort = (receiver: Receiver, hooks: AbortedRequestHooks) => Promise<AdapterApp>;

/**
 * Registers the aborted-request cases for one adapter that reads Node's request stream (Node, Express, Koa, Hono on
 * Node): the adapter is done with a request whose sender went away before it started reading (no answer is left to
 * give, and nothing is held), and the server keeps serving.
 *
 * @example
 * ```ts
 * import { runAbortedRequestCases } from '@kyb-webhooks/testing/adapter-suite'
 *
 * runAbortedRequestCases('node', startAppAfterAbort)
 * ```
 */
export function runAbortedRequestCases(name: string, startApp: StartAppAfterAbort): void {
  describe(`${name}: a sender that goes away before the adapter reads`, () => {
    let signer: TestSigner;
    let app: AdapterApp;
    const settled: string[] = [];
    const handled: string[] = [];
    beforeAll(async () => {
      signer = await createTestSigner();
      const receiver = createReceiver({ secrets: { ...signer.secrets } });
      receiver.onAny((event) => void handled.push(event.event_id));
      app = await startApp(receiver, { before: closedOrLater, settled: (how) => void settled.push(how) });
    });
    afterAll(async () => {
      await app?.close();
    });

    it('is done with the request (no answer left to give) when the sender aborted before it started', async () => {
      await sendHalfThenAbort(app.url);
      await expect.poll(() => settled.length, { timeout: 2000 }).toBe(1);
      const envelope = testEvents.dataRequestRefused();
      const { headers, body } = await signer.sign(envelope);
      expect((await fetch(app.url, { method: 'POST', headers, body })).status).toBe(200);
      expect(handled).toEqual([envelope.event_id]);
      expect(settled).toHaveLength(2);
    });
  });
}

function closedOrLater(req: { once(event: 'close', listener: () => void): unknown }): Promise<void> {
  return new Promise((resolve) => {
    req.once('close', resolve);
    setTimeout(resolve, 250);
  });
}

/** Sends a POST declaring 1000 bytes of body, a few of them, and goes away 50 ms later. */
function sendHalfThenAbort(url: string): Promise<void> {
  const target = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(target.port), target.hostname, () => {
      socket.write(
        `POST ${target.pathname} HTTP/1.1\r\nhost: ${target.host}\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"event":`,
      );
      setTimeout(() => {
        socket.destroy();
        resolve();
      }, 50);
    });
    socket.on('error', () => {});
  });
}
