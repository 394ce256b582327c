/**
 * What every entry point shares (docs/architecture.md §2.2): an adapter is an accessor map, as in inngest-js and
 * @octokit/webhooks. It says how to get the method, the headers and the body of a request, and how to write a status,
 * headers and a body back; {@link createAdapter} does the rest the same way for every framework: the body-limit
 * policy (./body-source.ts), the receiver's pipeline, the `onResult` hook and the JSON answer.
 */
import { optionRules } from '../option-rules.js';
import { validateArgument, validateOptions, type OptionRule, type OptionsSpec } from '../option-validation.js';
import type { HeadersInput } from './headers.js';
import { receiveDelivery, type BodySource } from './body-source.js';
import type { Receiver, ReceiveResult } from '../receiver.js';

/**
 * The answer an adapter writes: the status, every header it needs (Content-Type included) and the JSON text.
 *
 * @example
 * ```ts
 * const response: AdapterResponse = { status: 200, headers: { 'content-type': 'application/json; charset=utf-8' }, body: '{"received":true}' }
 * res.writeHead(response.status, response.headers).end(response.body)
 * ```
 */
export interface AdapterResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * How one framework's request and response look to the core: accessors in, a writer out. `Req` is what the
 * framework hands a handler (and what `onResult` gets), `Res` where the answer goes (the same object for Koa and
 * Hono contexts), `Out` what the framework wants back from the handler.
 *
 * @example
 * ```ts
 * const nodeMap: AdapterMap<IncomingMessage, ServerResponse, void> = {
 *   method: (req) => req.method,
 *   headers: nodeHeaders, // req.headers, a repeated Content-Type kept as fetch keeps it
 *   body: (req) => ({ kind: 'stream', stream: req, declaredLength: req.headers['content-length'] }),
 *   respond: (res, { status, headers, body }) => void res.writeHead(status, headers).end(body),
 * }
 * ```
 */
export interface AdapterMap<Req, Res, Out> {
  method(req: Req): string | undefined;
  headers(req: Req): HeadersInput;
  /** Where the raw body is; see {@link BodySource}. May be a promise (a framework's cached bytes). */
  body(req: Req): BodySource | Promise<BodySource>;
  respond(res: Res, response: AdapterResponse, req: Req): Out;
  /**
   * The runtime's `waitUntil` for this request, where work stops once the request is answered (Workers); see
   * `ReceiveInput.waitUntil`. Omitted on servers that keep running (Node, Bun, Deno).
   */
  waitUntil?(req: Req, res: Res): ((promise: Promise<unknown>) => void) | undefined;
}

/**
 * The options every adapter accepts.
 *
 * @example
 * ```ts
 * const options: AdapterOptions<Request> = { onResult: (result, request) => metrics.increment(`kyb.${result.status}`) }
 * ```
 */
export interface AdapterOptions<Req> {
  /**
   * Called once per delivery with its result (and the framework's request), after the answer is decided and before it
   * is written, e.g. for metrics. Not awaited; whatever it throws or rejects with is ignored, so it never changes the
   * answer.
   */
  onResult?: ((result: ReceiveResult, req: Req) => unknown) | undefined;
}

/**
 * Builds a framework's handler from its accessor map: reads the body with the receiver's limits, runs the pipeline,
 * calls `onResult`, and writes the JSON answer. The handler's promise rejects only when reading the body failed
 * because the sender went away (nobody is left to answer); frameworks pass that to their own error handling.
 *
 * @example
 * ```ts
 * const deliver = createAdapter(receiver, options, nodeMap)
 * createServer((req, res) => void deliver(req, res).catch(() => req.destroy()))
 * ```
 */
export function createAdapter<Req, Res, Out>(
  receiver: Receiver,
  options: AdapterOptions<Req>,
  map: AdapterMap<Req, Res, Out>,
): (req: Req, res: Res) => Promise<Out> {
  const { onResult } = options;
  return async (req, res) => {
    let body = map.body(req);
    if (body instanceof Promise) body = await body;
    const result = await receiveDelivery(receiver, {
      method: map.method(req),
      headers: map.headers(req),
      body,
      waitUntil: map.waitUntil?.(req, res),
    });
    if (onResult) notify(onResult, result, req);
    return map.respond(res, toAdapterResponse(result), req);
  };
}

function notify<Req>(onResult: (result: ReceiveResult, req: Req) => unknown, result: ReceiveResult, req: Req): void {
  try {
    const returned = onResult(result, req);
    // An async hook's rejection would otherwise become an unhandled rejection, which can stop a Node process.
    if (returned instanceof Promise) returned.catch(() => {});
  } catch {
    // metrics hooks never change the answer
  }
}

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * The answer for a receiver's result: its status, its headers plus `Content-Type: application/json; charset=utf-8`,
 * and its body as JSON text. The headers are a fresh object each time: some servers write into the one they are given
 * (`@hono/node-server` adds Content-Length to it).
 *
 * @example
 * ```ts
 * const { status, headers, body } = toAdapterResponse(receiver.reject('body_already_parsed'))
 * // 500, { 'content-type': 'application/json; charset=utf-8' }, '{"error":{"code":"body_already_parsed",…}}'
 * ```
 */
export function toAdapterResponse(result: ReceiveResult): AdapterResponse {
  return {
    status: result.status,
    headers: { ...result.headers, 'content-type': JSON_CONTENT_TYPE },
    body: JSON.stringify(result.body),
  };
}

const ON_RESULT_RULE: OptionRule = optionRules.func('called with the result of every delivery');

/**
 * The options spec of an adapter factory: its own options plus `onResult`, which every adapter accepts, with the
 * names people try for it (`onResponse`, `onDelivery`) pointing at it.
 *
 * @example
 * ```ts
 * const spec = adapterOptionsSpec({ owner: 'kybWebhooks (@kyb-webhooks/koa)', example: "kybWebhooks(receiver, { path: '/webhooks/kyb' })", options: { path: optionRules.urlPath() } })
 * validateOptions(options, spec)
 * ```
 */
export function adapterOptionsSpec(
  spec: Omit<OptionsSpec, 'options'> & { options?: OptionsSpec['options'] },
): OptionsSpec {
  return {
    ...spec,
    options: { ...spec.options, onResult: ON_RESULT_RULE },
    aliases: { onResponse: 'onResult', onDelivery: 'onResult', ...spec.aliases },
  };
}

/**
 * Checks an adapter factory's arguments: a receiver from `createReceiver`, and options that `spec` accepts (see
 * {@link adapterOptionsSpec}). Throws `config_invalid` naming `spec.owner`, the option and the fix.
 *
 * @example
 * ```ts
 * export function kybWebhooks(receiver: Receiver, options: KybExpressOptions = {}) {
 *   validateAdapterArguments(receiver, options, SPEC)
 *   …
 * }
 * ```
 */
export function validateAdapterArguments(receiver: unknown, options: unknown, spec: OptionsSpec): void {
  validateArgument(spec.owner, 'receiver', receiver, optionRules.receiver());
  validateOptions(options, spec);
}
