/**
 * The framework adapter conformance suite (docs/architecture.md §2.2): one set of cases, run over real HTTP on 127.0.0.1,
 * that every adapter (Express, Fastify, Koa, Hono, …) must pass with the same status, error code and handler
 * calls. Like inngest-js's `testFramework`, an adapter is done when this suite passes; what differs between
 * frameworks is only how an app is started, which the adapter's test file supplies.
 */
import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ERRORS, type Receiver, type ReceiverOptions, type ReceiveResult } from '@kyb-webhooks/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEvent, testEvents, type TestEnvelope } from '../fixtures.js';
import { startJwksServer, type JwksServer } from '../jwks-server.js';
import { createTestSender } from '../sender.js';
import { TEST_SUBJECTS } from '../fixtures.js';
import { runOversizedBodyCases } from './oversized.js';
import { runAbortedRequestCases, type StartAppAfterAbort } from './aborted.js';
import { createTestSigner, type SignOptions, type TestSigner } from '../signer.js';
import { createHarness, type Harness } from './harness.js';
import type { RemoteAdapterApps } from './remote.js';
import { sendRawRequest } from './raw-request.js';

export {
  createRemoteAdapterApp,
  connectRemoteAdapterApp,
  type FetchHandler,
  type MountAdapter,
  type RemoteAdapterApp,
  type RemoteAdapterApps,
} from './remote.js';
export { recordResults } from './harness.js';
export type { HandlerCall, HandlerPlan, Harness, ResultRecord } from './harness.js';

/**
 * A running app with the adapter mounted, as a start function returns it.
 *
 * @example
 * ```ts
 * const app: AdapterApp = { url: 'http://127.0.0.1:53211/webhooks/kyb', close: async () => server.close() }
 * ```
 */
export interface AdapterApp {
  /** The full URL deliveries are POSTed to, e.g. `http://127.0.0.1:53211/webhooks/kyb`. */
  url: string;
  /** Stop the server, closing kept-alive connections too. */
  close(): Promise<void>;
}

/**
 * The adapter options the suite passes to a start function, which must hand them to the adapter it mounts.
 *
 * @example
 * ```ts
 * const options: AdapterTestOptions = { onResult: (result) => console.log(result.status) }
 * ```
 */
export interface AdapterTestOptions {
  /** The adapter's `onResult` option; absent for most apps. */
  onResult?: (result: ReceiveResult) => unknown;
}

/**
 * Starts an app (on 127.0.0.1, any free port) whose webhook route hands deliveries to `receiver` through the
 * adapter under test, created with `options` (for the `onResult` case). The suite calls it once per receiver
 * configuration it needs.
 *
 * @example
 * ```ts
 * const startApp: StartAdapterApp = async (receiver, options) => {
 *   const app = express()
 *   app.all('/webhooks/kyb', kybWebhooks(receiver, options))
 *   return serveOnLoopback(createServer(app))
 * }
 * ```
 */
export type StartAdapterApp = (receiver: Receiver, options?: AdapterTestOptions) => Promise<AdapterApp>;

/**
 * Options of {@link runAdapterConformance}.
 *
 * @example
 * ```ts
 * const options: AdapterConformanceOptions = { mountedOn: 'post-only', startAppWithBodyParser }
 * ```
 */
export interface AdapterConformanceOptions {
  /**
   * Starts an app where a JSON body parser runs before the adapter and keeps no exact bytes (`express.json()`, a
   * Fastify route in a context with the default JSON parser, a Hono middleware calling `c.req.json()`, …). The
   * adapter must answer 500 `body_already_parsed`. Without it that case is registered as skipped.
   */
  startAppWithBodyParser?: StartAdapterApp;
  /**
   * Starts an app where a middleware awaits `hooks.before(req)` before the adapter, so the adapter starts after the
   * sender went away mid-body, and reports when the adapter is done with each request (see
   * {@link runAbortedRequestCases}). For adapters that read Node's request stream; without it that case is not
   * registered.
   */
  startAppAfterAbort?: StartAppAfterAbort;
  /**
   * How the start functions mount the adapter. `'all-methods'` (default): a GET to the webhook URL reaches the
   * adapter, which must answer 405 `method_not_allowed` with `Allow: POST`. `'post-only'` (e.g. Hono's
   * `app.post(path, handler)`): the GET never reaches the adapter, so the framework's own 404 or 405 is accepted;
   * the suite then checks only that status and that no handler ran.
   */
  mountedOn?: 'all-methods' | 'post-only';
  /** When set, the suite is registered as skipped under this message. */
  skip?: string | undefined;
}

/**
 * Serves a Node `http.Server` (not yet listening) on 127.0.0.1 at a free port, for start functions of
 * frameworks that hand out a request listener: Express, Koa, `@hono/node-server`'s `createAdaptorServer`.
 *
 * @example
 * ```ts
 * const startApp: StartAdapterApp = async (receiver) => {
 *   const app = new Koa().use(kybWebhooks(receiver, { path: '/webhooks/kyb' }))
 *   return serveOnLoopback(createServer(app.callback()))
 * }
 * ```
 */
export async function serveOnLoopback(server: Server, path = '/webhooks/kyb'): Promise<AdapterApp> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    close() {
      server.closeAllConnections();
      return new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

/** A small limit for the oversized-body cases; every regular fixture fits in it, the padded one does not. */
const SMALL_MAX_BODY_BYTES = 2048;
/** The handler deadline of the small-limits receiver: short, so a stuck handler's answer comes quickly. */
const SMALL_HANDLER_TIMEOUT_MS = 300;

/** An HTTP answer as the suite inspects it. */
interface Answer {
  status: number;
  /** `error.code` of the JSON body, or its `code` (`'duplicate'` for an acknowledged duplicate). */
  code: string | undefined;
  contentType: string;
  headers: Record<string, string>;
  body: unknown;
}

function toAnswer(status: number, headers: Record<string, string>, text: string): Answer {
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // frameworks' own 404 pages are not JSON
  }
  const parsed = body as { error?: { code?: string }; code?: string } | null;
  const code = typeof parsed === 'object' && parsed !== null ? (parsed.error?.code ?? parsed.code) : undefined;
  return { status, code, contentType: headers['content-type'] ?? '', headers, body };
}

async function post(
  url: string,
  init: { headers: Record<string, string>; body?: Uint8Array<ArrayBuffer>; method?: string },
): Promise<Answer> {
  const response = await fetch(url, {
    method: init.method ?? 'POST',
    headers: init.headers,
    body: init.body ?? null,
    redirect: 'manual',
  });
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  return toAnswer(response.status, headers, await response.text());
}

/**
 * POSTs with `Transfer-Encoding: chunked` and no Content-Length, writing each chunk after a pause, so the adapter
 * must read a streamed body. Resolves with the answer even when the server closes before the last chunk (413).
 */
function postChunked(url: string, headers: Record<string, string>, chunks: Uint8Array[], pauseMs = 5): Promise<Answer> {
  const { 'content-length': _dropped, ...rest } = headers;
  return sendBody(url, 'POST', { ...rest, 'transfer-encoding': 'chunked' }, chunks, pauseMs);
}

/**
 * Sends `chunks` as the body of a `method` request with node:http, which (unlike fetch) sends a body with any
 * method: chunked unless `headers` has a Content-Length. Resolves as {@link postChunked} does.
 */
function sendBody(
  url: string,
  method: string,
  headers: Record<string, string>,
  chunks: Uint8Array[],
  pauseMs = 5,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const request = httpRequest(url, { method, headers }, (response) => {
      const parts: Buffer[] = [];
      response.on('data', (part: Buffer) => parts.push(part));
      response.on('end', () => {
        answered = true;
        const flat: Record<string, string> = {};
        for (const [name, value] of Object.entries(response.headers)) {
          if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
        }
        resolve(toAnswer(response.statusCode ?? 0, flat, Buffer.concat(parts).toString('utf8')));
      });
    });
    // After an early 413 the server closes the connection; a write error then is expected, not a failure.
    request.on('error', (error) => {
      if (!answered) setTimeout(() => (answered ? undefined : reject(error)), 1000);
    });
    void (async () => {
      for (const chunk of chunks) {
        if (request.destroyed) return;
        request.write(chunk);
        await sleep(pauseMs);
      }
      if (!request.destroyed) request.end();
    })();
  });
}

function splitBytes(bytes: Uint8Array, parts: number): Uint8Array[] {
  const size = Math.ceil(bytes.byteLength / parts);
  const chunks: Uint8Array[] = [];
  for (let offset = 0; offset < bytes.byteLength; offset += size) chunks.push(bytes.subarray(offset, offset + size));
  return chunks;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function expectAnswer(answer: Answer, status: number, code?: string): void {
  expect({ status: answer.status, code: answer.code }).toEqual({ status, code });
  // Every answer of the adapter is the receiver's JSON, whatever the status, with the same Content-Type everywhere.
  expect(answer.contentType).toBe('application/json; charset=utf-8');
}

/**
 * Registers the adapter conformance cases with vitest. `startApp` is called once for the regular receiver, once
 * for one with a small `maxBodyBytes` and once with an `onResult` hook to pass to the adapter (a start function that
 * drops it fails that case); `options.startAppWithBodyParser` once more for the body-parser case. Each
 * case uses fresh event ids, so the cases share servers without interfering.
 *
 * In place of `startApp`, the apps of another runtime (Bun.serve, Deno.serve, workerd) can be given with
 * {@link connectRemoteAdapterApp}: that runtime then builds each receiver from the suite's options and reports its
 * handler calls over the control API of {@link createRemoteAdapterApp}; the cases are the same.
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http'
 * import express from 'express'
 * import { kybWebhooks } from '@kyb-webhooks/express'
 * import { runAdapterConformance, serveOnLoopback } from '@kyb-webhooks/testing/adapter-suite'
 *
 * runAdapterConformance('express', async (receiver, options) => {
 *   const app = express()
 *   app.all('/webhooks/kyb', kybWebhooks(receiver, options))
 *   return serveOnLoopback(createServer(app))
 * }, {
 *   startAppWithBodyParser: async (receiver) => {
 *     const app = express().use(express.json())
 *     app.all('/webhooks/kyb', kybWebhooks(receiver))
 *     return serveOnLoopback(createServer(app))
 *   },
 * })
 * ```
 */
export function runAdapterConformance(
  name: string,
  startApp: StartAdapterApp | RemoteAdapterApps,
  options: AdapterConformanceOptions = {},
): void {
  if (options.skip) {
    describe.skip(`${name}: adapter conformance`, () => {
      it(options.skip!, () => {});
    });
    return;
  }
  const mountedOn = options.mountedOn ?? 'all-methods';

  describe(`${name}: adapter conformance`, () => {
    let signer: TestSigner;
    let jwksServer: JwksServer;
    let main: Harness;
    let small: Harness;
    const apps: AdapterApp[] = [];
    let app: AdapterApp;
    let smallApp: AdapterApp;
    let parsedApp: AdapterApp | undefined;
    let parsed: Harness;
    let hookedApp: AdapterApp;
    let hooked: Harness;
    // A remote app (./remote.ts) mounts the body-parser variant itself.
    const withBodyParser = typeof startApp !== 'function' || options.startAppWithBodyParser !== undefined;

    beforeAll(async () => {
      signer = await createTestSigner();
      jwksServer = await startJwksServer(signer.jwks);
      const receiverOptions: ReceiverOptions = {
        secrets: { ...signer.secrets },
        attestation: { issuer: signer.issuer, audience: signer.audience, jwksUrl: jwksServer.url },
      };
      const smallOptions: ReceiverOptions = {
        ...receiverOptions,
        maxBodyBytes: SMALL_MAX_BODY_BYTES,
        handlerTimeoutMs: SMALL_HANDLER_TIMEOUT_MS,
      };
      if (typeof startApp === 'function') {
        // The receivers live in this process; startApp mounts the adapter under test on them.
        const local = createHarness(receiverOptions);
        const localSmall = createHarness(smallOptions);
        const localHooked = createHarness(receiverOptions);
        [main, small, parsed, hooked] = [local.harness, localSmall.harness, local.harness, localHooked.harness];
        apps.push((app = await startApp(local.receiver)));
        apps.push((smallApp = await startApp(localSmall.receiver)));
        apps.push((hookedApp = await startApp(localHooked.receiver, { onResult: localHooked.onResult })));
        if (options.startAppWithBodyParser)
          apps.push((parsedApp = await options.startAppWithBodyParser(local.receiver)));
      } else {
        // The receivers live in another runtime, which builds them from these options (./remote.ts).
        ({ app, harness: main } = await startApp.start(receiverOptions));
        ({ app: smallApp, harness: small } = await startApp.start(smallOptions));
        ({ app: parsedApp, harness: parsed } = await startApp.start(receiverOptions, { bodyParser: true }));
        ({ app: hookedApp, harness: hooked } = await startApp.start(receiverOptions, { onResult: true }));
        apps.push(app, smallApp, parsedApp, hookedApp);
      }
    });
    afterAll(async () => {
      await Promise.all(apps.map((started) => started.close()));
      await jwksServer?.close();
    });

    async function deliver(envelope: TestEnvelope, signOptions?: SignOptions, url = app.url): Promise<Answer> {
      const { headers, body } = await signer.sign(envelope, signOptions);
      return post(url, { headers, body });
    }

    it('accepts a valid HMAC-only event and runs its handler once', async () => {
      const envelope = testEvents.dataRequestPendingApproval();
      const answer = await deliver(envelope);
      expectAnswer(answer, 200);
      expect(answer.body).toEqual({ received: true });
      expect(await main.callsFor(envelope.event_id)).toEqual([
        { eventId: envelope.event_id, type: envelope.event, ok: true },
      ]);
    });

    it("accepts a valid attested release and hands both directors' answers to the handler", async () => {
      const envelope = testEvents.dataRequestReleased();
      expectAnswer(await deliver(envelope), 200);
      expect(await main.callsFor(envelope.event_id)).toHaveLength(1);
      const directorNames = (await main.answersFor(envelope.event_id))?.filter(
        (answer) => answer.name === 'director_name',
      );
      expect(directorNames?.map((answer) => answer.subject).sort()).toEqual(
        [TEST_SUBJECTS.firstDirector, TEST_SUBJECTS.secondDirector].sort(),
      );
    });

    it('acknowledges a duplicate with 200 duplicate and does not run the handler again', async () => {
      const envelope = testEvents.dataRequestRefused();
      expectAnswer(await deliver(envelope), 200);
      const again = await deliver(envelope, { attempt: 2 });
      expectAnswer(again, 200, 'duplicate');
      expect(again.body).toMatchObject({ received: true });
      expect(await main.callsFor(envelope.event_id)).toHaveLength(1);
    });

    it('calls onResult once per delivery with its result, and an onResult that throws or rejects changes no answer', async () => {
      const accepted = testEvents.dataRequestRefused();
      const forged = testEvents.dataRequestRefused();
      const failing = testEvents.signatureRequestRefused();
      await hooked.plan(failing.event_id, { failures: 1 });
      // The hook throws on the 1st and 3rd call and rejects on the 2nd and 4th (./harness.ts, recordResults).
      expectAnswer(await deliver(accepted, {}, hookedApp.url), 200);
      expectAnswer(await deliver(forged, { secret: 'whsec_forged' }, hookedApp.url), 401, 'signature_mismatch');
      expectAnswer(await deliver(accepted, { attempt: 2 }, hookedApp.url), 200, 'duplicate');
      expectAnswer(await deliver(failing, {}, hookedApp.url), 500, 'handler_failed');
      expect(await hooked.results()).toEqual([
        { status: 200, eventId: accepted.event_id },
        { status: 401, code: 'signature_mismatch' },
        { status: 200, code: 'duplicate', eventId: accepted.event_id },
        { status: 500, code: 'handler_failed', eventId: failing.event_id },
      ]);
      expect(await hooked.callsFor(accepted.event_id)).toHaveLength(1);
    });

    it('runs the handler exactly once for 100 concurrent deliveries of one event', async () => {
      const envelope = testEvents.signatureRequestSigned();
      await main.plan(envelope.event_id, { delayMs: 150 });
      const { headers, body } = await signer.sign(envelope);
      const answers = await Promise.all(Array.from({ length: 100 }, () => post(app.url, { headers, body })));
      for (const answer of answers) {
        expect([
          [200, undefined],
          [200, 'duplicate'],
          [409, 'in_progress'],
        ]).toContainEqual([answer.status, answer.code]);
      }
      expect(answers.filter((answer) => answer.status === 200 && answer.code === undefined)).toHaveLength(1);
      expect(await main.callsFor(envelope.event_id)).toHaveLength(1);
      expectAnswer(await deliver(envelope, { attempt: 2 }), 200, 'duplicate');
      expect(await main.callsFor(envelope.event_id)).toHaveLength(1);
    });

    it('answers a handler failure with 500 handler_failed and runs the handler again on the retry', async () => {
      const envelope = testEvents.signatureRequestRefused();
      await main.plan(envelope.event_id, { failures: 1 });
      expectAnswer(await deliver(envelope), 500, 'handler_failed');
      expectAnswer(await deliver(envelope, { attempt: 2 }), 200);
      expect((await main.callsFor(envelope.event_id)).map((call) => call.ok)).toEqual([false, true]);
    });

    it.each<[string, () => SignOptions, number, string]>([
      ['a forged signature', () => ({ secret: 'whsec_forged' }), 401, 'signature_mismatch'],
      ['a stale timestamp', () => ({ timestamp: Math.floor(Date.now() / 1000) - 600 }), 401, 'signature_expired'],
      ['a future timestamp', () => ({ timestamp: Math.floor(Date.now() / 1000) + 600 }), 401, 'signature_future'],
      ['an unknown kv', () => ({ version: '99' }), 401, 'signature_unknown_version'],
    ])('rejects %s', async (_case, signOptions, status, code) => {
      const envelope = testEvents.dataRequestPendingApproval();
      expectAnswer(await deliver(envelope, signOptions()), status, code);
      expect(await main.callsFor(envelope.event_id)).toHaveLength(0);
    });

    it('answers a handler that never settles with 503 handler_timeout, and keeps the event claimed', async () => {
      const envelope = testEvents.dataRequestRefused();
      await small.plan(envelope.event_id, { hang: true });
      expectAnswer(await deliver(envelope, {}, smallApp.url), 503, 'handler_timeout');
      expectAnswer(await deliver(envelope, { attempt: 2 }, smallApp.url), 409, 'in_progress');
      expect(await small.callsFor(envelope.event_id)).toHaveLength(1);
    });

    it('rejects a relabelled attestation with 401 attestation_relabelled', async () => {
      const envelope = testEvents.dataRequestReleased();
      expectAnswer(await deliver(envelope, { claims: { seq: envelope.seq + 1 } }), 401, 'attestation_relabelled');
      expect(await main.callsFor(envelope.event_id)).toHaveLength(0);
    });

    it('rejects a login token carried as the attestation with 401 attestation_invalid_typ', async () => {
      const envelope = testEvents.businessWalletAddressChanged();
      expectAnswer(await deliver(envelope, { attestation: await signer.loginToken() }), 401, 'attestation_invalid_typ');
      expect(await main.callsFor(envelope.event_id)).toHaveLength(0);
    });

    it('accepts a body within a small maxBodyBytes and refuses one over it with 413 body_too_large', async () => {
      const fits = testEvents.dataRequestRefused();
      expectAnswer(await deliver(fits, {}, smallApp.url), 200);
      const oversized = testEvents.dataRequestRefused({ data: { note: 'x'.repeat(SMALL_MAX_BODY_BYTES * 2) } });
      expectAnswer(await deliver(oversized, {}, smallApp.url), 413, 'body_too_large');
      expect(await small.callsFor(oversized.event_id)).toHaveLength(0);
    });

    it('refuses an oversized chunked body (no Content-Length) with 413 body_too_large', async () => {
      const oversized = testEvents.dataRequestRefused({ data: { note: 'x'.repeat(SMALL_MAX_BODY_BYTES * 2) } });
      const { headers, body } = await signer.sign(oversized);
      expectAnswer(await postChunked(smallApp.url, headers, splitBytes(body, 4), 0), 413, 'body_too_large');
      expect(await small.callsFor(oversized.event_id)).toHaveLength(0);
    });

    it('answers a wrong content type with 415 unsupported_media_type', async () => {
      const envelope = testEvents.dataRequestPendingApproval();
      const { headers, body } = signer.signBytes(JSON.stringify(envelope), {
        eventId: envelope.event_id,
        contentType: 'text/plain',
      });
      expectAnswer(await post(app.url, { headers, body }), 415, 'unsupported_media_type');
      expect(await main.callsFor(envelope.event_id)).toHaveLength(0);
    });

    // Node keeps the first of a repeated Content-Type and drops the rest; fetch joins them. Every entry point
    // answers alike: two media types are not one (no HTTP client sends this, so the request is written by hand).
    it.each<[string, string[]]>([
      ['JSON first', ['content-type: application/json', 'content-type: text/plain']],
      ['JSON twice', ['Content-Type: application/json', 'content-type: application/json']],
    ])('answers a repeated Content-Type (%s) with 415 unsupported_media_type', async (_case, contentTypes) => {
      const envelope = testEvents.dataRequestPendingApproval();
      const { headers, body } = await signer.sign(envelope);
      const others = Object.entries(headers)
        .filter(([name]) => name.toLowerCase() !== 'content-type')
        .map(([name, value]) => `${name}: ${value}`);
      expect(await sendRawRequest(app.url, [...contentTypes, ...others], body)).toBe('415 unsupported_media_type');
      expect(await main.callsFor(envelope.event_id)).toHaveLength(0);
    });

    it(
      mountedOn === 'all-methods'
        ? 'answers a GET with 405 method_not_allowed and Allow: POST'
        : 'leaves a GET to the framework (404 or 405; the adapter is mounted for POST only)',
      async () => {
        const before = (await main.calls()).length;
        const answer = await post(app.url, { method: 'GET', headers: {} });
        if (mountedOn === 'all-methods') {
          expectAnswer(answer, 405, 'method_not_allowed');
          expect(answer.headers['allow']).toBe('POST');
        } else {
          expect([404, 405]).toContain(answer.status);
        }
        expect((await main.calls()).length).toBe(before);
      },
    );

    // The method is step 1's first check (docs/architecture.md §3), whatever the body: never 413 for its size or
    // 500 for a parser's leftovers. A body sent with a GET is legal HTTP, and some clients send one.
    it.each<[string, string, Record<string, string>]>([
      ['a GET', 'GET', { 'content-length': String(2 * SMALL_MAX_BODY_BYTES) }],
      ['a DELETE', 'DELETE', { 'transfer-encoding': 'chunked' }],
    ])(
      mountedOn === 'all-methods'
        ? 'answers %s carrying a body over maxBodyBytes with 405 method_not_allowed and Allow: POST, not 413'
        : 'leaves %s carrying a body over maxBodyBytes to the framework (404 or 405)',
      async (_case, method, framing) => {
        const before = (await small.calls()).length;
        const body = new Uint8Array(2 * SMALL_MAX_BODY_BYTES).fill(0x20); // JSON whitespace
        const headers = { 'content-type': 'application/json', ...framing };
        expectMethodRefused(await sendBody(smallApp.url, method, headers, splitBytes(body, 4), 0));
        expect((await small.calls()).length).toBe(before);
      },
    );

    it.skipIf(!withBodyParser)(
      mountedOn === 'all-methods'
        ? 'answers a DELETE whose JSON body a body parser read first with 405 method_not_allowed, not 500'
        : 'leaves a DELETE whose JSON body a body parser read first to the framework (404 or 405)',
      async () => {
        const envelope = testEvents.dataRequestPendingApproval();
        const { headers, body } = await signer.sign(envelope);
        const sized = { ...headers, 'content-length': String(body.byteLength) };
        expectMethodRefused(await sendBody(parsedApp!.url, 'DELETE', sized, [body]));
        expect(await parsed.callsFor(envelope.event_id)).toHaveLength(0);
      },
    );

    function expectMethodRefused(answer: Answer): void {
      if (mountedOn === 'post-only') return void expect([404, 405]).toContain(answer.status);
      expectAnswer(answer, 405, 'method_not_allowed');
      expect(answer.headers['allow']).toBe('POST');
    }

    it.each<[string, () => Uint8Array, number, string]>([
      ['invalid JSON', () => new TextEncoder().encode('{"event": "kyb.data_request.refused",'), 400, 'body_not_json'],
      [
        'bytes that are not UTF-8 (correctly signed)',
        () =>
          Uint8Array.from([
            ...new TextEncoder().encode('{"event":"'),
            0xff,
            0xfe,
            0xc3,
            ...new TextEncoder().encode('"}'),
          ]),
        400,
        'body_not_json',
      ],
      [
        'JSON that is not an envelope',
        () => new TextEncoder().encode(JSON.stringify({ event: 'kyb.data_request.refused', data: {} })),
        400,
        'envelope_invalid',
      ],
    ])('rejects %s', async (_case, bytes, status, code) => {
      const before = (await main.calls()).length;
      const { headers, body } = signer.signBytes(bytes());
      expectAnswer(await post(app.url, { headers, body }), status, code);
      expect((await main.calls()).length).toBe(before);
    });

    it('verifies an attested event of an unknown type, acknowledges it and calls onUnknown', async () => {
      const envelope = createTestEvent('kyb.data_request.refused', { data: { level: 'high' } });
      const unknown: TestEnvelope = { ...envelope, event: 'kyb.business.sanctions_flagged' };
      expectAnswer(await deliver(unknown, { attest: true }), 200);
      expect((await main.unknownCalls()).filter((id) => id === unknown.event_id)).toHaveLength(1);
      expect(await main.callsFor(unknown.event_id)).toEqual([
        { eventId: unknown.event_id, type: unknown.event, ok: true },
      ]);
    });

    it.skipIf(!withBodyParser)(
      'answers 500 body_already_parsed, with the fix in the message, when a JSON body parser ran first',
      async () => {
        const envelope = testEvents.dataRequestPendingApproval();
        const answer = await deliver(envelope, {}, parsedApp!.url);
        expectAnswer(answer, 500, 'body_already_parsed');
        expect(answer.body).toEqual({
          error: { code: 'body_already_parsed', message: ERRORS.body_already_parsed.message },
        });
        expect(await parsed.callsFor(envelope.event_id)).toHaveLength(0);
      },
    );

    it('processes a chunked request (Transfer-Encoding: chunked, no Content-Length)', async () => {
      const envelope = testEvents.dataRequestReleased();
      const { headers, body } = await signer.sign(envelope);
      expectAnswer(await postChunked(app.url, headers, splitBytes(body, 5)), 200);
      expect(await main.callsFor(envelope.event_id)).toEqual([
        { eventId: envelope.event_id, type: envelope.event, ok: true },
      ]);
    });

    it("follows the test sender's retry schedule against a handler that fails twice", async () => {
      const sender = createTestSender({ url: app.url, signer, retry: { maxAttempts: 5, baseDelayMs: 20 } });
      const envelope = testEvents.dataRequestRefused();
      await main.plan(envelope.event_id, { failures: 2 });
      const record = await sender.send(envelope);
      expect(record.delivered).toBe(true);
      expect(record.attempts.map((attempt) => [attempt.attempt, attempt.status, attempt.code])).toEqual([
        [1, 500, 'handler_failed'],
        [2, 500, 'handler_failed'],
        [3, 200, undefined],
      ]);
      for (const n of [2, 3]) {
        const gap = record.attempts[n - 1]!.startedAt - record.attempts[n - 2]!.startedAt;
        expect(gap).toBeGreaterThanOrEqual(sender.delayBefore(n) - 2);
      }
      const calls = await main.callsFor(envelope.event_id);
      expect(calls).toHaveLength(3);
      expect(calls.filter((call) => call.ok)).toHaveLength(1);
    });
  });
  // The oversized-body cases drive raw sockets and build receivers of their own, so they run for local apps only.
  if (typeof startApp === 'function') runOversizedBodyCases(name, startApp);
  if (options.startAppAfterAbort) runAbortedRequestCases(name, options.startAppAfterAbort);
}
export { runOversizedBodyCases } from './oversized.js';
export { runAbortedRequestCases, type AbortedRequestHooks, type StartAppAfterAbort } from './aborted.js';
export { serveFetchOnLoopback } from './fetch-bridge.js';
export { runAdapterOptionCases, type AdapterOptionCases } from './options.js';
export { expectConfigInvalid } from '../config-invalid.js';
