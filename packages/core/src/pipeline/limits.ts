/**
 * Step 1 of the pipeline (docs/architecture.md §3.1): the limits a delivery must be within before any of its bytes is looked at.
 * Adapters that stream the body stop reading at the same limit (body.ts); this is the check on what they handed over.
 */
import { rejection, type KybWebhookError } from '../errors.js';
import { readHeader } from '../http/headers.js';
import type { ReceiveInput } from '../receiver-types.js';

/** The default of `maxBodyBytes`: 1 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

const encoder = new TextEncoder();

/**
 * Whether a request's method is POST, in any case; an omitted method is vouched for as POST by the adapter.
 *
 * @example
 * ```ts
 * if (!isPostMethod(request.method)) return receiver.reject('method_not_allowed')
 * ```
 */
export function isPostMethod(method: string | undefined): boolean {
  return method === undefined || method === 'POST' || method.toUpperCase() === 'POST';
}

/**
 * Method POST (an adapter that omits it vouches for it), a body that is still bytes (not parsed by another
 * middleware), at most `maxBodyBytes` of it, and a JSON content type (a charset parameter is allowed). Returns the
 * body as bytes, or the refusal: `method_not_allowed`, `body_already_parsed`, `body_too_large`,
 * `unsupported_media_type`, checked in that order.
 */
export function checkLimits(input: ReceiveInput, maxBodyBytes: number): Uint8Array | KybWebhookError {
  if (!isPostMethod(input.method)) return rejection('method_not_allowed');
  const body = toBytes(input.body);
  if (!body) return rejection('body_already_parsed');
  if (body.byteLength > maxBodyBytes) return rejection('body_too_large');
  if (!isJsonContentType(readHeader(input.headers, 'content-type'))) return rejection('unsupported_media_type');
  return body;
}

function toBytes(body: unknown): Uint8Array | undefined {
  if (body instanceof Uint8Array) return body;
  if (typeof body === 'string') return encoder.encode(body);
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  return undefined;
}

/**
 * One media type, application/json, with any parameters. A repeated Content-Type reaches here joined with ", " (fetch
 * joins it; `nodeHeaders` does on Node): a comma outside a quoted parameter value means two, and is refused.
 */
function isJsonContentType(value: string | undefined): boolean {
  if (value === 'application/json') return true;
  if (!value) return false;
  const semicolon = value.indexOf(';');
  const mediaType = (semicolon < 0 ? value : value.slice(0, semicolon)).trim().toLowerCase();
  return mediaType === 'application/json' && (semicolon < 0 || !hasUnquotedComma(value, semicolon));
}

function hasUnquotedComma(value: string, from: number): boolean {
  let quoted = false;
  for (let i = from; i < value.length; i++) {
    const char = value[i];
    if (char === '\\' && quoted)
      i++; // a quoted-pair: the next character is literal
    else if (char === '"') quoted = !quoted;
    else if (char === ',' && !quoted) return true;
  }
  return false;
}
