/**
 * Oversized-body cases for the adapter conformance suite (issue 11, point 8): a sender that declares or streams a
 * body over `maxBodyBytes` must read the receiver's 413 `body_too_large` every time, over real HTTP, also when it
 * asked for `Connection: close`, and a kept-alive connection must stay usable for the next delivery.
 *
 * Why a real sender is needed: a server that answers and closes while the sender is still uploading leaves unread
 * bytes in its receive buffer, so the kernel answers the close with a TCP reset, which can destroy the 413 before
 * the sender reads it. Only a body really written while the answer arrives shows that.
 */
import { Agent, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { createReceiver, type Receiver } from '@kyb-webhooks/core';
import { OVERSIZED_BODY_DRAIN } from '@kyb-webhooks/core/adapter';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testEvents } from '../fixtures.js';
import { createTestSigner, type TestSigner } from '../signer.js';
import type { AdapterApp, StartAdapterApp } from './index.js';
import { exchangeRaw, parseAnswer, type Outcome } from './raw-request.js';

/** The limit of these cases: big enough that a body of twice it cannot sit whole in the socket buffers. */
const OVERSIZED_MAX_BODY_BYTES = 1024 * 1024;
/**
 * What the socket buffers of a loopback connection can hold on top of what the server read (the sender's send
 * buffer, the server's receive buffer, Node's own): a sender counts bytes its socket took, not bytes read.
 */
const SOCKET_BUFFERS_SLACK = 24 * 1024 * 1024;
/** Requests per case: one lucky answer proves nothing, 20 in a row do (before the fix each adapter lost 4 to 11 of 20 to a reset). */
const ROUNDS = 20;

interface OversizedRequest {
  url: string;
  bytes: number;
  framing: 'content-length' | 'chunked';
}

/**
 * Sends `bytes` of body with `Connection: close` over a raw socket, as fast as the socket takes them and reading
 * while it writes, as a streaming sender does. The outcome is the answer when a whole one arrived (even if a socket
 * error followed it: the sender has read it), else the socket error or the close that came first.
 */
function sendOversized({ url, bytes, framing }: OversizedRequest): Promise<Outcome> {
  return exchangeRaw(url, (socket, target) => {
    const framingHeader = framing === 'content-length' ? `content-length: ${bytes}` : 'transfer-encoding: chunked';
    socket.write(
      `POST ${target.pathname} HTTP/1.1\r\nhost: ${target.host}\r\ncontent-type: application/json\r\n${framingHeader}\r\nconnection: close\r\n\r\n`,
    );
    const chunk = Buffer.alloc(16 * 1024, 0x20); // JSON whitespace: harmless if it were ever parsed
    let sent = 0;
    const write = (): void => {
      while (sent < bytes && !socket.destroyed) {
        const size = Math.min(chunk.byteLength, bytes - sent);
        sent += size;
        const part = chunk.subarray(0, size);
        const flushed =
          framing === 'content-length'
            ? socket.write(part)
            : socket.write(Buffer.concat([Buffer.from(`${size.toString(16)}\r\n`), part, Buffer.from('\r\n')]));
        if (!flushed) {
          socket.once('drain', write);
          return;
        }
      }
      if (!socket.destroyed) socket.write(framing === 'chunked' ? '0\r\n\r\n' : '');
    };
    // The body follows the head a moment later, as from a sender that streams it: the server has then seen the
    // head (and may already answer) while the body is still coming.
    setTimeout(write, 0);
  });
}

/** How an endless upload ended, as its sender saw it. */
interface EndlessOutcome {
  /** When the server closed the connection (FIN, reset or error), in ms after the head was sent; undefined: never. */
  closedAfterMs: number | undefined;
  /** Bytes of body the socket took: what the server read, plus what the socket buffers on both sides held. */
  sentBytes: number;
  /** The answer, when a whole one arrived before the close (a reset may destroy it past the drain's bounds). */
  answer: Outcome | undefined;
}

/**
 * Uploads a chunked body that never ends: `fastBytes` as fast as the socket takes them, then (`trickle`) 1 KiB every
 * 100 ms, or (no `trickle`) everything as fast as possible. Keeps sending after an answer, as a sender that does not
 * read one does, and stops when the server closes the connection or after `giveUpMs`.
 */
function sendEndless(
  url: string,
  { fastBytes, trickle, giveUpMs }: { fastBytes: number; trickle: boolean; giveUpMs: number },
): Promise<EndlessOutcome> {
  const target = new URL(url);
  return new Promise((resolve) => {
    const received: Buffer[] = [];
    let sentBytes = 0;
    let done = false;
    const started = Date.now();
    const socket = connect(Number(target.port), target.hostname);
    const finish = (closed: boolean): void => {
      if (done) return;
      done = true;
      clearTimeout(giveUp);
      clearInterval(trickling);
      socket.destroy();
      resolve({
        closedAfterMs: closed ? Date.now() - started : undefined,
        sentBytes,
        answer: parseAnswer(Buffer.concat(received)),
      });
    };
    const giveUp = setTimeout(() => finish(false), giveUpMs);
    socket.on('data', (part: Buffer) => void received.push(part));
    for (const event of ['end', 'close', 'error']) socket.on(event, () => finish(true));
    socket.write(
      `POST ${target.pathname} HTTP/1.1\r\nhost: ${target.host}\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n`,
    );
    const chunkOf = (size: number) =>
      Buffer.concat([Buffer.from(`${size.toString(16)}\r\n`), Buffer.alloc(size, 0x20), Buffer.from('\r\n')]);
    const fast = chunkOf(16 * 1024);
    const pump = (): void => {
      while (!done && (!trickle || sentBytes < fastBytes)) {
        sentBytes += 16 * 1024;
        if (!socket.write(fast)) return void socket.once('drain', pump);
      }
    };
    pump();
    const slow = chunkOf(1024);
    const trickling = setInterval(() => {
      if (done || !trickle || sentBytes < fastBytes || socket.writableLength > 0) return;
      sentBytes += 1024;
      socket.write(slow);
    }, 100);
  });
}

/**
 * Sends one request through a kept-alive `agent` (node:http), body written while the answer may arrive, and
 * reports the status and error code, or the error that came first.
 */
function sendThroughAgent(
  url: string,
  agent: Agent,
  headers: Record<string, string>,
  body: Uint8Array,
): Promise<Outcome> {
  return new Promise((resolve) => {
    const request = httpRequest(url, { method: 'POST', headers, agent }, (response) => {
      const parts: Buffer[] = [];
      response.on('data', (part: Buffer) => parts.push(part));
      response.on('error', (error: NodeJS.ErrnoException) => resolve(`error ${error.code ?? error.message}`));
      response.on('end', () => {
        let code: unknown;
        try {
          code = (JSON.parse(Buffer.concat(parts).toString('utf8')) as { error?: { code?: unknown } }).error?.code;
        } catch {
          code = 'not-json';
        }
        resolve(`${response.statusCode} ${String(code)}`);
      });
    });
    request.on('error', (error: NodeJS.ErrnoException) => resolve(`error ${error.code ?? error.message}`));
    request.end(body);
  });
}

/**
 * Registers the oversized-body cases for one adapter. `startApp` is called once, with a receiver whose
 * `maxBodyBytes` is 1 MiB; the cases send bodies of twice that.
 *
 * @example
 * ```ts
 * import { runOversizedBodyCases } from '@kyb-webhooks/testing/adapter-suite'
 *
 * runOversizedBodyCases('express', (receiver) => start(receiver))
 * ```
 */
export function runOversizedBodyCases(name: string, startApp: StartAdapterApp): void {
  describe(`${name}: oversized bodies reach the sender as 413`, () => {
    let signer: TestSigner;
    let receiver: Receiver;
    let app: AdapterApp;
    const handled: string[] = [];
    beforeAll(async () => {
      signer = await createTestSigner();
      receiver = createReceiver({ secrets: { ...signer.secrets }, maxBodyBytes: OVERSIZED_MAX_BODY_BYTES });
      receiver.onAny((event) => void handled.push(event.event_id));
      app = await startApp(receiver);
    });
    afterAll(async () => {
      await app?.close();
    });

    const expected = Array.from({ length: ROUNDS }, () => '413 body_too_large');

    it(`answers 413 body_too_large to each of ${ROUNDS} requests declaring 2 × maxBodyBytes with Connection: close`, async () => {
      const outcomes: Outcome[] = [];
      for (let round = 0; round < ROUNDS; round += 1) {
        outcomes.push(
          await sendOversized({ url: app.url, bytes: 2 * OVERSIZED_MAX_BODY_BYTES, framing: 'content-length' }),
        );
      }
      expect(outcomes).toEqual(expected);
    });

    it(`answers 413 body_too_large to each of ${ROUNDS} chunked bodies of 2 × maxBodyBytes with Connection: close`, async () => {
      const outcomes: Outcome[] = [];
      for (let round = 0; round < ROUNDS; round += 1) {
        outcomes.push(await sendOversized({ url: app.url, bytes: 2 * OVERSIZED_MAX_BODY_BYTES, framing: 'chunked' }));
      }
      expect(outcomes).toEqual(expected);
    });

    // The drain before the 413 is bounded (OVERSIZED_BODY_DRAIN: 4 MiB past the limit, 5 s); past a bound the
    // connection must close, or the server itself goes on reading the rest without limit after the answer.
    it('stops reading an endless body at the drain bound (maxBytesPastLimit past the limit) and closes the connection', async () => {
      const outcome = await sendEndless(app.url, {
        fastBytes: Number.POSITIVE_INFINITY,
        trickle: false,
        giveUpMs: OVERSIZED_BODY_DRAIN.maxMs + 5000,
      });
      // Slack for a loaded 2-core CI machine; before the fix the connection never closed.
      expect(outcome.closedAfterMs).toBeLessThanOrEqual(OVERSIZED_BODY_DRAIN.maxMs + 2500);
      expect(outcome.sentBytes).toBeLessThanOrEqual(
        OVERSIZED_MAX_BODY_BYTES + OVERSIZED_BODY_DRAIN.maxBytesPastLimit + SOCKET_BUFFERS_SLACK,
      );
      // Past the bound a reset may destroy the answer before the sender reads it; one that arrived is the 413.
      if (outcome.answer !== undefined) expect(outcome.answer).toBe('413 body_too_large');
    }, 15_000);

    it('stops reading a trickled body at the drain bound (maxMs) and closes the connection', async () => {
      const outcome = await sendEndless(app.url, {
        fastBytes: 2 * OVERSIZED_MAX_BODY_BYTES,
        trickle: true,
        giveUpMs: OVERSIZED_BODY_DRAIN.maxMs + 5000,
      });
      expect(outcome.closedAfterMs).toBeGreaterThanOrEqual(OVERSIZED_BODY_DRAIN.maxMs - 500);
      expect(outcome.closedAfterMs).toBeLessThanOrEqual(OVERSIZED_BODY_DRAIN.maxMs + 2500);
      if (outcome.answer !== undefined) expect(outcome.answer).toBe('413 body_too_large');
    }, 15_000);

    it(`answers 413 body_too_large to each of ${ROUNDS} oversized requests on a kept-alive agent, then accepts a delivery on it`, async () => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const outcomes: Outcome[] = [];
        const padding = new Uint8Array(2 * OVERSIZED_MAX_BODY_BYTES).fill(0x20);
        for (let round = 0; round < ROUNDS; round += 1) {
          // node:http sends a Uint8Array body with Content-Length; half the rounds stream it chunked instead.
          const framing: Record<string, string> =
            round % 2 === 0 ? { 'content-length': String(padding.byteLength) } : { 'transfer-encoding': 'chunked' };
          outcomes.push(
            await sendThroughAgent(app.url, agent, { 'content-type': 'application/json', ...framing }, padding),
          );
        }
        expect(outcomes).toEqual(expected);
        const envelope = testEvents.dataRequestRefused();
        const { headers, body } = await signer.sign(envelope);
        expect(await sendThroughAgent(app.url, agent, headers, body)).toBe('200 undefined');
        expect(handled).toEqual([envelope.event_id]);
      } finally {
        agent.destroy();
      }
    });
  });
}
