import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CliError, usageError } from './errors.js';

/**
 * A captured delivery: the exact body bytes and the headers they came with.
 *
 * @example
 * ```ts
 * const capture = readCaptureFile('captures/01JH….json')
 * await receiver.receive({ method: capture.method, headers: capture.headers, body: capture.body })
 * ```
 */
export interface Capture {
  method: string;
  headers: Record<string, string>;
  body: Uint8Array;
  /** Where it was read from, for the output. */
  source: string;
}

/**
 * The format of capture files (`send --save`, `scenario --save`), read back by `verify` and `replay`.
 *
 * @example
 * ```ts
 * { "format": "kyb-webhooks-capture/1", "method": "POST", "headers": { "service-kyb-signature": "t=…" }, "body": "{…}" }
 * ```
 */
export const CAPTURE_FORMAT = 'kyb-webhooks-capture/1';

// Connection-level headers: they describe one HTTP hop, not the delivery, and fetch sets its own.
const HOP_HEADERS = new Set([
  'host',
  'content-length',
  'connection',
  'transfer-encoding',
  'keep-alive',
  'upgrade',
  'expect',
  'te',
  'trailer',
]);

/**
 * Reads a capture file: `{ headers, body }` (body as UTF-8 text) or `{ headers, bodyBase64 }`, plus optional `method`.
 *
 * @example
 * ```ts
 * readCaptureFile('delivery.json').headers['service-event-id']
 * ```
 */
export function readCaptureFile(path: string): Capture {
  const parsed = parseJsonFile(path, 'capture');
  if (typeof parsed !== 'object' || parsed === null) throw badCapture(path, 'it is not a JSON object');
  const record = parsed as { method?: unknown; headers?: unknown; body?: unknown; bodyBase64?: unknown };
  const headers = headersFromObject(record.headers, path);
  let body: Uint8Array;
  if (typeof record.bodyBase64 === 'string') body = new Uint8Array(Buffer.from(record.bodyBase64, 'base64'));
  else if (typeof record.body === 'string') body = new TextEncoder().encode(record.body);
  else throw badCapture(path, 'it has neither "body" (text) nor "bodyBase64"');
  const method = typeof record.method === 'string' ? record.method : 'POST';
  return { method, headers, body, source: path };
}

/**
 * Builds a capture from a headers file (a JSON object, or `Name: value` lines as `curl -D` writes them) and a
 * body file (the exact bytes).
 *
 * @example
 * ```ts
 * readHeadersAndBody('headers.txt', 'body.json')
 * ```
 */
export function readHeadersAndBody(headersPath: string, bodyPath: string): Capture {
  const text = readText(headersPath, 'headers');
  let headers: Record<string, string>;
  if (text.trimStart().startsWith('{'))
    headers = headersFromObject(parseJson(text, headersPath, 'headers'), headersPath);
  else headers = headersFromLines(text, headersPath);
  let body: Uint8Array;
  try {
    body = new Uint8Array(readFileSync(bodyPath));
  } catch (error) {
    throw usageError(`Could not read the body file ${bodyPath} (${(error as NodeJS.ErrnoException).code ?? 'error'}).`);
  }
  return { method: 'POST', headers, body, source: bodyPath };
}

/**
 * Writes a capture file into `dir` (created when missing) and returns its path. The body is kept as text when it is
 * valid UTF-8, so the file stays readable; otherwise as base64.
 *
 * @example
 * ```ts
 * saveCapture('captures', 'duplicate-1', { headers, body })
 * ```
 */
export function saveCapture(
  dir: string,
  name: string,
  delivery: { url?: string; headers: Record<string, string>; body: Uint8Array },
): string {
  const path = resolve(join(dir, `${name.replace(/[^A-Za-z0-9._-]/g, '_')}.json`));
  try {
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    // The delivery has been sent by now: exit 1, not the "nothing was sent" of a usage error.
    throw new CliError(
      `Could not write the capture ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'}): --save must name a directory you can write. The delivery was sent; its capture was not written.`,
    );
  }
  let bodyField: { body: string } | { bodyBase64: string };
  try {
    bodyField = { body: new TextDecoder('utf-8', { fatal: true }).decode(delivery.body) };
  } catch {
    bodyField = { bodyBase64: Buffer.from(delivery.body).toString('base64') };
  }
  const capture = {
    format: CAPTURE_FORMAT,
    capturedAt: new Date().toISOString(),
    url: delivery.url,
    method: 'POST',
    headers: delivery.headers,
    ...bodyField,
  };
  try {
    writeFileSync(path, `${JSON.stringify(capture, null, 2)}\n`);
  } catch (error) {
    throw new CliError(
      `Could not write the capture ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'}): --save must name a directory you can write. The delivery was sent; its capture was not written.`,
    );
  }
  return path;
}

/**
 * The headers to send when replaying: the capture's own, minus connection-level ones.
 *
 * @example
 * ```ts
 * replayHeaders({ host: 'x', 'service-event-id': '01…' }) // { 'service-event-id': '01…' }
 * ```
 */
export function replayHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_HEADERS.has(name)));
}

function headersFromObject(value: unknown, path: string): Record<string, string> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw badCapture(path, '"headers" is not an object of header names to values');
  const headers: Record<string, string> = {};
  for (const [name, headerValue] of Object.entries(value)) {
    if (typeof headerValue === 'string') headers[name.toLowerCase()] = headerValue;
    else if (Array.isArray(headerValue)) headers[name.toLowerCase()] = headerValue.map(String).join(', ');
    else if (typeof headerValue === 'number') headers[name.toLowerCase()] = String(headerValue);
  }
  checkHeaders(headers, (problem) => badCapture(path, problem));
  return headers;
}

function headersFromLines(text: string, path: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    // The request or status line ("POST /webhooks HTTP/1.1") has no header name before a colon at the start.
    if (colon <= 0 || /\s/.test(line.slice(0, colon))) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  checkHeaders(headers, (problem) => usageError(`The headers file ${path} cannot be used: ${problem}.`));
  return headers;
}

// RFC 9110 field names; values as fetch sends them (no CR, LF or NUL, Latin-1 only). Checked on reading, so a
// capture fetch would refuse is an input error, not a server that seems down (replay) or a delivery that
// verifies but can never be sent (verify).
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// eslint-disable-next-line no-control-regex -- the control characters are what is looked for
const BAD_VALUE = /[\r\n\0]|[^\u0000-\u00ff]/;

function checkHeaders(headers: Record<string, string>, fail: (problem: string) => CliError): void {
  for (const [name, value] of Object.entries(headers)) {
    // Neither the name nor the value is quoted unless it is well-formed: a capture is untrusted text.
    if (!TOKEN.test(name))
      throw fail(
        "a header name is not an HTTP token (letters, digits and !#$%&'*+-.^_`|~ only); fix or remove that header",
      );
    if (BAD_VALUE.test(value))
      throw fail(
        `the value of header "${name.slice(0, 64)}" has a line break, a NUL or a character beyond Latin-1, which HTTP cannot carry; fix or remove that header`,
      );
  }
}

function parseJsonFile(path: string, what: string): unknown {
  return parseJson(readText(path, what), path, what);
}

function readText(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw usageError(`Could not read the ${what} file ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'}).`);
  }
}

// The parse error is not quoted: its message can contain a piece of the file, which may be a token.
function parseJson(text: string, path: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw usageError(`The ${what} file ${path} is not valid JSON.`);
  }
}

function badCapture(path: string, problem: string): CliError {
  return usageError(
    `The capture file ${path} cannot be used: ${problem}. Captures are written by \`send --save <dir>\`; see the README for the format.`,
  );
}

/**
 * The secret version (`kv`) a delivery's `Service-KYB-Signature` header names, read leniently (the rest of the header
 * may be broken, as in a capture being re-signed); `undefined` when it names none a receiver would accept.
 *
 * @example
 * ```ts
 * signatureVersionOf({ 'service-kyb-signature': 't=1767225600,v1=…,kv=2' }) // '2'
 * ```
 */
export function signatureVersionOf(headers: Readonly<Record<string, string>> | undefined): string | undefined {
  return /(?:^|,)kv=([A-Za-z0-9._-]{1,64})(?:,|$)/.exec(headers?.['service-kyb-signature'] ?? '')?.[1];
}
