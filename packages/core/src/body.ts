/**
 * The part of a Node readable stream (an `http.IncomingMessage`) that reading a body needs. Typed structurally
 * so the core imports nothing from `node:`.
 */
export interface ByteStream {
  on(event: 'data', listener: (chunk: Uint8Array | string) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  removeListener(event: string, listener: (...args: never[]) => void): unknown;
  resume?(): unknown;
}

/** The outcome of {@link readBodyStream}. */
export type BodyReadResult = { ok: true; body: Uint8Array } | { ok: false; code: 'body_too_large' };

/**
 * Reads a request stream into one `Uint8Array`, exactly as sent, and stops keeping it as soon as it exceeds
 * `maxBytes` (or at once when the declared Content-Length already does), so an oversized body is never buffered whole.
 * Used by the Node adapters (Express, Koa); rejects when the stream errors (client gone).
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
  const declared = options.declaredLength === undefined ? Number.NaN : Number(options.declaredLength);
  if (declared > options.maxBytes) return Promise.resolve(TOO_LARGE);
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    let length = 0;
    const onData = (chunk: Uint8Array | string): void => {
      const bytes = typeof chunk === 'string' ? textEncoder.encode(chunk) : chunk;
      length += bytes.byteLength;
      if (length > options.maxBytes) {
        // Keep the stream flowing with nobody listening: the rest is discarded, never buffered. Pausing (or closing
        // the connection) instead would leave the sender's upload blocked until the socket is torn down, and a
        // reset socket can swallow the 413 before the sender reads it.
        stream.removeListener('data', onData);
        stream.resume?.();
        chunks.length = 0; // nothing to keep; the later 'end' then builds no body
        resolve(TOO_LARGE);
        return;
      }
      chunks.push(bytes);
    };
    // The 'end' and 'error' listeners stay: after the promise settled they are no-ops, and an 'error' listener
    // keeps a late socket error from becoming an uncaught exception. Removing them would cost more per request.
    stream.on('data', onData);
    stream.on('end', () => resolve({ ok: true, body: concatBytes(chunks, length) }));
    stream.on('error', reject);
  });
}

/**
 * Reads a Web `ReadableStream` body (Hono, Workers, Deno, Bun) with the same limit, buffering at most
 * `maxBytes` plus one chunk.
 *
 * @example
 * ```ts
 * const read = await readWebBodyStream(request.body, { maxBytes: receiver.maxBodyBytes })
 * if (!read.ok) return respond(receiver.reject(read.code))
 * ```
 */
export async function readWebBodyStream(stream: ReadableStream<Uint8Array>, options: { maxBytes: number }): Promise<BodyReadResult> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    length += value.byteLength;
    if (length > options.maxBytes) {
      // Not cancel(): on @hono/node-server that destroys the socket before the 413 is written; the server
      // drains or closes the rest itself once the answer is out.
      reader.releaseLock();
      return TOO_LARGE;
    }
    chunks.push(value);
  }
  return { ok: true, body: concatBytes(chunks, length) };
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
