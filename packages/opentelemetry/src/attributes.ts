/*
 * Attribute values the OpenTelemetry layer derives: an error's low-cardinality type, how a failed operation's span
 * records it, and what a client request's span and duration metric share. Free of user text by construction.
 */
import { SpanStatusCode, type Attributes, type Span } from '@opentelemetry/api';
import type { ClientRequestTrace } from '@kyb-webhooks/core';
import { ATTRIBUTES as A } from './names.js';

/** The HTTP methods recorded as they are; any other is `_OTHER`, as the HTTP conventions say. */
export const HTTP_METHODS = new Set(['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'TRACE']);
/** What an error type may look like: an identifier or a code; anything else is recorded as `_OTHER`. */
const ERROR_TYPE = /^[A-Za-z0-9_$][\w$.:-]{0,63}$/;

/** What a client request's span and duration metric share: the method, and the API's host and port. */
export function requestAttributes(trace: ClientRequestTrace): Attributes {
  const attributes: Attributes = { [A.httpRequestMethod]: HTTP_METHODS.has(trace.method) ? trace.method : '_OTHER' };
  addServer(attributes, trace.origin);
  return attributes;
}

/**
 * Sets `server.address` and `server.port` from a URL (its scheme's port when none is written); returns the parsed
 * URL, or undefined for one that does not parse, which is left out rather than guessed.
 */
export function addServer(attributes: Attributes, url: string): URL | undefined {
  try {
    const parsed = new URL(url);
    attributes[A.serverAddress] = parsed.hostname;
    attributes[A.serverPort] = Number(parsed.port) || (parsed.protocol === 'https:' ? 443 : 80);
    return parsed;
  } catch {
    return undefined;
  }
}

/**
 * A low-cardinality name for what was thrown, free of user text: its string `code` (our rejection codes, a driver's
 * `ECONNREFUSED`), else its name or class's name (`TypeError`, `StoreDown`), else `_OTHER`.
 */
export function errorTypeOf(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    const { code, name } = error as { code?: unknown; name?: unknown };
    if (typeof code === 'string' && ERROR_TYPE.test(code)) return code;
    // A subclass that does not set `name` still says `Error` there: its class's name says more.
    if (typeof name === 'string' && name !== 'Error' && ERROR_TYPE.test(name)) return name;
    const constructorName = (error as { constructor?: { name?: unknown } }).constructor?.name;
    if (typeof constructorName === 'string' && constructorName !== 'Object' && ERROR_TYPE.test(constructorName))
      return constructorName;
    if (name === 'Error') return name;
  }
  return '_OTHER';
}

/** A failed operation's span: its type only, as `error.type`, an exception event and the status. */
export function recordFailure(span: Span, type: string): void {
  span.setAttribute(A.errorType, type);
  // Only the type: the message and the stack (which repeats the message) are user text and may hold personal data.
  span.recordException({ name: type });
  span.setStatus({ code: SpanStatusCode.ERROR });
}
