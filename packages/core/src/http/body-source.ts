/**
 * The body-limit policy every entry point shares (docs/architecture.md §2.2, step 1): where the raw bytes of a delivery come from,
 * and how an oversized, streamed or already-parsed body is answered. Adapters only say which kind of body they hold
 * ({@link BodySource}); {@link receiveDelivery} reads it within the receiver's `maxBodyBytes`, drains an oversized one
 * before the 413 (see OVERSIZED_BODY_DRAIN), and refuses a parsed one, so every framework answers alike.
 */
import { discardBodyStream, discardWebBodyStream, readBodyStream, readWebBodyStream, type ByteStream } from './body.js';
import type { HeadersInput } from './headers.js';
import { isPostMethod } from '../pipeline/limits.js';
import type { Receiver, ReceiveResult } from '../receiver.js';

/**
 * Where an adapter finds the raw body of a delivery.
 *
 * - `bytes`: already read, exactly as sent (an `express.raw()` Buffer, Hono's cached `arrayBuffer()`, a byte-exact
 *   string a body parser kept); the receiver applies `maxBodyBytes` to it.
 * - `stream`: a Node readable (`http.IncomingMessage`) nothing has read yet; read with the limit, never buffered past it.
 * - `web-stream`: a Web `ReadableStream` body nothing has read yet (`request.body`; `null` for no body), likewise.
 * - `parsed`: a body parser consumed the bytes and kept only what it made of them: answered 500 `body_already_parsed`.
 * - `refused-too-large`: the framework refused the body for its size itself (Fastify's `bodyLimit`); what is left of
 *   `stream` is drained within the same bounds before the 413.
 *
 * @example
 * ```ts
 * const body: BodySource = req.body instanceof Uint8Array
 *   ? { kind: 'bytes', bytes: req.body }
 *   : { kind: 'stream', stream: req, declaredLength: req.headers['content-length'] }
 * ```
 */
export type BodySource =
  | { kind: 'bytes'; bytes: Uint8Array | ArrayBuffer | string }
  | { kind: 'stream'; stream: ByteStream; declaredLength?: string | number | null | undefined }
  | {
      kind: 'web-stream';
      stream: ReadableStream<Uint8Array> | null;
      declaredLength?: string | number | null | undefined;
    }
  | { kind: 'parsed' }
  | {
      kind: 'refused-too-large';
      stream?: ByteStream | undefined;
      maxBytes: number;
      declaredLength?: string | number | null | undefined;
    };

/**
 * A delivery as an adapter maps it: the method, the headers and where the body is.
 *
 * @example
 * ```ts
 * const input: DeliveryInput = { method: req.method, headers: req.headers, body: { kind: 'stream', stream: req } }
 * ```
 */
export interface DeliveryInput {
  /** HTTP method; when omitted the adapter vouches that it is POST. */
  method?: string | undefined;
  headers: HeadersInput;
  body: BodySource;
  /** See `ReceiveInput.waitUntil`: for work that settles after the answer, on runtimes that stop it otherwise. */
  waitUntil?: ((promise: Promise<unknown>) => void) | undefined;
}

const EMPTY = new Uint8Array(0);

/**
 * Reads the body of one delivery as its {@link BodySource} says, within `receiver.maxBodyBytes`, and hands the exact
 * bytes to `receiver.receive`. A method other than POST is answered 405 `method_not_allowed` (with `Allow: POST`)
 * whatever its body, which is drained (bounded) and never kept; an oversized body is drained (bounded) and answered
 * 413 `body_too_large`, a parsed one 500 `body_already_parsed`; all are logged like every other rejection. Rejects
 * only when a stream fails while it is read, or was already destroyed before it (the sender went away), which leaves
 * nobody to answer.
 *
 * @example
 * ```ts
 * const result = await receiveDelivery(receiver, {
 *   method: request.method,
 *   headers: request.headers,
 *   body: { kind: 'web-stream', stream: request.body, declaredLength: request.headers.get('content-length') },
 * })
 * ```
 */
export function receiveDelivery(receiver: Receiver, input: DeliveryInput): Promise<ReceiveResult> {
  const { body } = input;
  if (!isPostMethod(input.method)) return refuseMethod(receiver, body);
  switch (body.kind) {
    case 'bytes':
      return receiver.receive({
        method: input.method,
        headers: input.headers,
        body: body.bytes,
        waitUntil: input.waitUntil,
      });
    case 'stream':
      return readBodyStream(body.stream, {
        maxBytes: receiver.maxBodyBytes,
        declaredLength: body.declaredLength ?? undefined,
      }).then((read) =>
        read.ok
          ? receiver.receive({
              method: input.method,
              headers: input.headers,
              body: read.body,
              waitUntil: input.waitUntil,
            })
          : receiver.reject(read.code),
      );
    case 'web-stream': {
      const { stream } = body;
      if (stream === null)
        return receiver.receive({
          method: input.method,
          headers: input.headers,
          body: EMPTY,
          waitUntil: input.waitUntil,
        });
      // A locked stream is being read by someone else: whatever they keep, it is no longer ours to verify.
      if (stream.locked) return Promise.resolve(receiver.reject('body_already_parsed'));
      return readWebBodyStream(stream, {
        maxBytes: receiver.maxBodyBytes,
        declaredLength: body.declaredLength ?? undefined,
      }).then((read) =>
        read.ok
          ? receiver.receive({
              method: input.method,
              headers: input.headers,
              body: read.body,
              waitUntil: input.waitUntil,
            })
          : receiver.reject(read.code),
      );
    }
    case 'parsed':
      return Promise.resolve(receiver.reject('body_already_parsed'));
    case 'refused-too-large':
      return drainRefused(body).then(() => receiver.reject('body_too_large'));
  }
}

/**
 * The method is step 1's first check (docs/architecture.md §3), whatever the body: a GET or DELETE carrying one gets
 * 405 like one without, never 413 or 500 from what its body is. What is left of the body is read and dropped within
 * the same bounds as before a 413 (never kept), so the sender reads the 405 instead of a reset connection.
 */
async function refuseMethod(receiver: Receiver, body: BodySource): Promise<ReceiveResult> {
  const maxBytes = receiver.maxBodyBytes;
  if (body.kind === 'stream') {
    // A stream the sender already left resolves at once: the 405 then goes nowhere, harmlessly.
    await discardBodyStream(body.stream, { maxBytes, declaredLength: body.declaredLength ?? undefined });
  } else if (body.kind === 'web-stream') {
    if (body.stream !== null && !body.stream.locked)
      await discardWebBodyStream(body.stream, { maxBytes, declaredLength: body.declaredLength ?? undefined });
  } else if (body.kind === 'refused-too-large') {
    await drainRefused(body);
  }
  return receiver.reject('method_not_allowed');
}

/**
 * The framework answered "too large" without reading the rest; closing over unread bytes resets the connection, which
 * can destroy the 413 before the sender reads it. Either the declared length broke the limit (nothing was read, so
 * the rest is the declared length) or what the framework read did (then the limit left is 0).
 */
async function drainRefused(body: {
  stream?: ByteStream | undefined;
  maxBytes: number;
  declaredLength?: string | number | null | undefined;
}): Promise<void> {
  const { stream } = body;
  if (!stream || stream.readableEnded) return;
  const drain = stream.readableDidRead
    ? { maxBytes: 0 }
    : { maxBytes: body.maxBytes, declaredLength: body.declaredLength ?? undefined };
  await discardBodyStream(stream, drain);
}
