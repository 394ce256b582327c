/**
 * The part of a Node readable stream (an `http.IncomingMessage`) that reading a body needs. Typed structurally
 * so the core imports nothing from `node:`.
 *
 * @example
 * ```ts
 * const stream: ByteStream = req // an http.IncomingMessage
 * const read = await readBodyStream(stream, { maxBytes: receiver.maxBodyBytes, declaredLength: req.headers['content-length'] })
 * ```
 */
export interface ByteStream {
  on(event: 'data', listener: (chunk: Uint8Array | string) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'close', listener: () => void): unknown;
  removeListener(event: string, listener: (...args: never[]) => void): unknown;
  resume?(): unknown;
  /** True once the stream emitted 'end' (Node streams have it); nothing is left to drain then. */
  readonly readableEnded?: boolean;
  /** True once anything read from the stream (Node 16.7+): a parser consumed at least part of it. */
  readonly readableDidRead?: boolean;
  /** True once the stream was destroyed: after its 'end', or because the sender went away before it. */
  readonly destroyed?: boolean;
  /** The error the stream was destroyed with (Node 18+), e.g. Node's `aborted` when the sender went away. */
  readonly errored?: Error | null;
}

/**
 * How much of an oversized body is read and thrown away before the 413 is answered: at most this many bytes past
 * `maxBytes` (a body declared larger than `maxBytes + maxBytesPastLimit` is not read at all), and at most this long.
 *
 * Why read it at all: a server that answers and closes while the sender is still uploading leaves unread bytes in
 * its receive buffer, so the kernel turns the close into a TCP reset, which can destroy the 413 before the sender
 * reads it (then it sees EPIPE or ECONNRESET and learns nothing). Reading the rest first lets the connection close
 * cleanly, and the sender always reads the 413. The bounds keep that cheap: nothing drained is kept, and a sender
 * that declares a huge body or trickles one gets its answer (and possibly a reset) after them, as before.
 *
 * @example
 * ```ts
 * // a default receiver (maxBodyBytes 1 MiB) reads up to 5 MiB of an oversized body, for up to 5 s, then answers 413
 * const cleanlyAnswered = receiver.maxBodyBytes + OVERSIZED_BODY_DRAIN.maxBytesPastLimit
 * ```
 */
export const OVERSIZED_BODY_DRAIN: Readonly<{ maxBytesPastLimit: number; maxMs: number }> = Object.freeze({
  maxBytesPastLimit: 4 * 1024 * 1024,
  maxMs: 5_000,
});

/**
 * The outcome of {@link readBodyStream}.
 *
 * @example
 * ```ts
 * const read: BodyReadResult = await readBodyStream(req, { maxBytes: 1024 * 1024 })
 * if (!read.ok) return respond(receiver.reject(read.code)) // 413 body_too_large
 * ```
 */
export type BodyReadResult = { ok: true; body: Uint8Array } | { ok: false; code: 'body_too_large' };

/**
 * Reads a request stream into one `Uint8Array`, exactly as sent, and stops keeping it as soon as it exceeds
 * `maxBytes` (or at once when the declared Content-Length already does), so an oversized body is never buffered whole.
 * An oversized body is then read and discarded within {@link OVERSIZED_BODY_DRAIN} before the result comes back, so
 * the 413 written after it reaches the sender instead of a connection reset.
 * Used through {@link receiveDelivery} by the Node entry points (Express, Koa, `@kyb-webhooks/node`); rejects when the
 * stream errors or closes (client gone) before a decision, and at once when it was already destroyed before the call
 * (the sender went away while earlier middleware ran), with the stream's error (Node's `aborted`).
 *
 * @example
 * ```ts
 * const read = await readBodyStream(req, { maxBytes: receiver.maxBodyBytes, declaredLength: req.headers['content-length'] })
 * if (!read.ok) return send(receiver.reject(read.code))
 * ```
 */
export function readBodyStream(
  stream: ByteStream,
  options: { maxBytes: number; declaredLength?: string | number | undefined },
): Promise<BodyReadResult> {
  // The sender went away before anyone read the body (an async middleware ran first): 'error' and 'close' were
  // emitted before these listeners and 'end' never will be, so waiting for them would never settle.
  const gone = goneError(stream);
  if (gone) return Promise.reject(gone);
  const declared = declaredBytes(options.declaredLength);
  if (declared > options.maxBytes) return discardBodyStream(stream, options).then(() => TOO_LARGE);
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    let length = 0;
    let tooLarge = false;
    const onData = (chunk: Uint8Array | string): void => {
      const bytes = typeof chunk === 'string' ? textEncoder.encode(chunk) : chunk;
      length += bytes.byteLength;
      if (length > options.maxBytes) {
        // The rest is discarded, never buffered, and the answer waits until it is read (see OVERSIZED_BODY_DRAIN).
        // Pausing instead would leave the sender's upload blocked until the socket is torn down.
        stream.removeListener('data', onData);
        chunks.length = 0; // nothing to keep
        tooLarge = true; // the 'end' of the drained rest is not a body
        void discardBodyStream(stream, { maxBytes: 0 }).then(() => resolve(TOO_LARGE));
        return;
      }
      chunks.push(bytes);
    };
    // The 'end', 'error' and 'close' listeners stay: after the promise settled they are no-ops, and an 'error'
    // listener keeps a late socket error from becoming an uncaught exception. Removing them would cost more per
    // request. 'close' comes after 'end' for a whole body; without 'end' (destroyed without an error) the body
    // never comes, and the sender is gone as after a mid-body error.
    stream.on('data', onData);
    stream.on('end', () => tooLarge || resolve({ ok: true, body: concatBytes(chunks, length) }));
    stream.on('error', (error) => tooLarge || reject(error));
    stream.on('close', () => tooLarge || reject(stream.errored ?? abortedError()));
  });
}

/**
 * Why a stream that has not ended will never give its body, or undefined while it still may: it was destroyed (the
 * sender went away, and Node destroyed the request with its `aborted` error) or it errored.
 */
function goneError(stream: ByteStream): Error | undefined {
  if (stream.readableEnded) return undefined;
  if (stream.errored) return stream.errored;
  return stream.destroyed ? abortedError() : undefined;
}

/** What Node rejects a request with when its sender goes away mid-body, for a stream closed without an error. */
function abortedError(): Error {
  return Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
}

/**
 * Reads what is left of a refused request body and throws it away, so the connection can close cleanly after the
 * 413 (see {@link OVERSIZED_BODY_DRAIN} for why and for the bounds). `maxBytes` is the limit the body broke (0 when
 * the part read so far already did). Resolves when the body ended, the sender went away, or a bound was reached: at
 * once when `declaredLength` is over `maxBytes + maxBytesPastLimit`, otherwise after that many bytes or `maxMs`.
 * Never rejects. For adapters whose framework refused the body itself
 * (Fastify); {@link readBodyStream} does it on its own.
 *
 * @example
 * ```ts
 * // in a framework's "body too large" error handler, before answering
 * await discardBodyStream(request.raw, { maxBytes: bodyLimit, declaredLength: request.headers['content-length'] })
 * reply.code(413).send(receiver.reject('body_too_large').body)
 * ```
 */
export function discardBodyStream(
  stream: ByteStream,
  options: { maxBytes: number; declaredLength?: string | number | undefined },
): Promise<void> {
  const budget = drainBudget(options);
  // Ended or destroyed: nothing more will come, and the events the drain waits for were emitted already.
  if (budget === undefined || stream.readableEnded || stream.destroyed || stream.errored) return Promise.resolve();
  return new Promise((resolve) => {
    let drained = 0;
    const finish = (): void => {
      clearTimeout(timer);
      stream.removeListener('data', onData);
      stream.removeListener('end', finish);
      stream.removeListener('close', finish);
      // The 'error' listener stays (finish is idempotent): a late socket error must not become an uncaught exception.
      resolve();
    };
    const onData = (chunk: Uint8Array | string): void => {
      drained += typeof chunk === 'string' ? chunk.length : chunk.byteLength;
      if (drained > budget) finish();
    };
    const timer = setTimeout(finish, OVERSIZED_BODY_DRAIN.maxMs);
    stream.on('data', onData);
    stream.on('end', finish);
    stream.on('close', finish);
    stream.on('error', finish);
    // Flowing: what arrives after finish() is dropped by the stream itself, never buffered.
    stream.resume?.();
  });
}

/**
 * Reads a Web `ReadableStream` body (Hono, Workers, Deno, Bun) with the same limit, buffering at most
 * `maxBytes` plus one chunk. Like {@link readBodyStream}, an oversized body (also one refused from `declaredLength`)
 * is read and discarded within {@link OVERSIZED_BODY_DRAIN} before the result comes back, unless `drain: false`
 * (a client reading a response, which then cancels the stream).
 *
 * @example
 * ```ts
 * const read = await readWebBodyStream(request.body, { maxBytes: receiver.maxBodyBytes })
 * if (!read.ok) return respond(receiver.reject(read.code))
 * ```
 */
export async function readWebBodyStream(
  stream: ReadableStream<Uint8Array>,
  options: { maxBytes: number; declaredLength?: string | number | undefined; drain?: boolean },
): Promise<BodyReadResult> {
  const reader = stream.getReader();
  const declared = declaredBytes(options.declaredLength);
  // A client reading a response has no answer to get through: it stops at once (`drain: false`) and cancels.
  const drain = options.drain ?? true;
  if (declared > options.maxBytes) {
    if (drain && declared <= options.maxBytes + OVERSIZED_BODY_DRAIN.maxBytesPastLimit)
      await discardWeb(reader, declared);
    releaseQuietly(reader);
    return TOO_LARGE;
  }
  const chunks: Uint8Array[] = [];
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    length += value.byteLength;
    if (length > options.maxBytes) {
      if (drain) await discardWeb(reader, OVERSIZED_BODY_DRAIN.maxBytesPastLimit);
      // Not cancel(): on @hono/node-server that destroys the socket before the 413 is written.
      releaseQuietly(reader);
      return TOO_LARGE;
    }
    chunks.push(value);
  }
  return { ok: true, body: concatBytes(chunks, length) };
}

/**
 * Reads what is left of a refused Web `ReadableStream` body and throws it away, within the same bounds as
 * {@link discardBodyStream} (nothing read when `declaredLength` is already past `maxBytes + maxBytesPastLimit`).
 * Never rejects. For a request refused before its body is looked at (a method other than POST).
 *
 * @example
 * ```ts
 * if (request.body && !request.body.locked) await discardWebBodyStream(request.body, { maxBytes: receiver.maxBodyBytes })
 * return respond(receiver.reject('method_not_allowed'))
 * ```
 */
export async function discardWebBodyStream(
  stream: ReadableStream<Uint8Array>,
  options: { maxBytes: number; declaredLength?: string | number | undefined },
): Promise<void> {
  const budget = drainBudget(options);
  if (budget === undefined) return;
  const reader = stream.getReader();
  await discardWeb(reader, budget);
  releaseQuietly(reader);
}

/**
 * Lets go of a reader whose read may still be pending (the drain's deadline passed). Node, Bun and Deno reject that
 * read; workerd throws instead, which must not turn the 413 into an uncaught 500. The stream then stays locked, and
 * nothing else reads it.
 */
function releaseQuietly(reader: ReadableStreamDefaultReader<Uint8Array>): void {
  try {
    reader.releaseLock();
  } catch {
    // workerd: a read is outstanding
  }
}

/** A declared Content-Length as a number; NaN (never over a limit) when absent or not a number. */
function declaredBytes(declaredLength: string | number | undefined): number {
  return declaredLength === undefined ? Number.NaN : Number(declaredLength);
}

/**
 * How many bytes of a refused body to drain: its limit plus {@link OVERSIZED_BODY_DRAIN}'s `maxBytesPastLimit`, or
 * `undefined` (drain nothing) when the declared length is already past that.
 */
function drainBudget(options: { maxBytes: number; declaredLength?: string | number | undefined }): number | undefined {
  const budget = Math.max(0, options.maxBytes) + OVERSIZED_BODY_DRAIN.maxBytesPastLimit;
  return declaredBytes(options.declaredLength) > budget ? undefined : budget;
}

/** Reads and drops up to `budget` bytes, for at most OVERSIZED_BODY_DRAIN.maxMs; never throws. */
async function discardWeb(reader: ReadableStreamDefaultReader<Uint8Array>, budget: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), OVERSIZED_BODY_DRAIN.maxMs);
  });
  try {
    let drained = 0;
    while (drained < budget) {
      // A read still pending at the deadline is rejected by releaseLock() later (race() has handled it by then), or,
      // on workerd, left pending: see releaseQuietly.
      const next = await Promise.race([reader.read(), timedOut]);
      if (next === 'timeout' || next.done) return;
      drained += next.value.byteLength;
    }
  } catch {
    // the sender went away: nothing left to drain
  } finally {
    clearTimeout(timer);
  }
}

const textEncoder = new TextEncoder();
const TOO_LARGE: BodyReadResult = Object.freeze({ ok: false, code: 'body_too_large' });

function concatBytes(chunks: Uint8Array[], length: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  if (chunks.length === 0) return new Uint8Array(0);
  const out = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}
