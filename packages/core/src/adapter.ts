/**
 * `@kyb-webhooks/core/adapter`: what an adapter writer needs to put a receiver behind a framework. An adapter is an
 * accessor map for {@link createAdapter} (how to get the method, the headers and the body of a request, and how to
 * write the answer); the core does the rest the same way for every framework: the body-limit policy
 * ({@link receiveDelivery}), the receiver's pipeline, the `onResult` hook and the JSON answer. Also the body readers
 * for Node and Web streams, the header reader, and the option kit that checks an adapter factory's options with the
 * messages every other factory gives.
 *
 * Prove an adapter with the conformance suite, `runAdapterConformance` from `@kyb-webhooks/testing/adapter-suite`.
 *
 * @example
 * ```ts
 * import type { IncomingMessage, ServerResponse } from 'node:http'
 * import type { Receiver } from '@kyb-webhooks/core'
 * import { createAdapter, adapterOptionsSpec, nodeHeaders, validateAdapterArguments } from '@kyb-webhooks/core/adapter'
 *
 * const SPEC = adapterOptionsSpec({ owner: 'myWebhooks', example: 'myWebhooks(receiver)' })
 *
 * export function myWebhooks(receiver: Receiver, options = {}) {
 *   validateAdapterArguments(receiver, options, SPEC)
 *   return createAdapter<IncomingMessage, ServerResponse, void>(receiver, options, {
 *     method: (req) => req.method,
 *     headers: nodeHeaders,
 *     body: (req) => ({ kind: 'stream', stream: req, declaredLength: req.headers['content-length'] }),
 *     respond: (res, { status, headers, body }) => void res.writeHead(status, headers).end(body),
 *   })
 * }
 * ```
 */

// The adapter
export { createAdapter, toAdapterResponse, adapterOptionsSpec, validateAdapterArguments } from './http/adapter-core.js';
export type { AdapterMap, AdapterOptions, AdapterResponse } from './http/adapter-core.js';

// Where the body comes from, and reading it within the receiver's limit
export { receiveDelivery } from './http/body-source.js';
export type { BodySource, DeliveryInput } from './http/body-source.js';
export { requestBodySource } from './http/fetch-handler.js';
export { readBodyStream, readWebBodyStream, discardBodyStream, OVERSIZED_BODY_DRAIN } from './http/body.js';
export type { ByteStream, BodyReadResult } from './http/body.js';
export { nodeHeaders, readHeader } from './http/headers.js';
export type { HeadersInput } from './http/headers.js';

// The option kit
export { optionRules } from './option-rules.js';
export { validateOptions, validateArgument } from './option-validation.js';
export type { OptionRule, OptionsSpec, FieldsSpec, ReportProblem } from './option-validation.js';
export { describeValue, suggestOption } from './option-words.js';

// Watching an operation, for the other packages of this family (the client's API calls)
export { observersOf } from './telemetry/observers.js';
export type { Observers } from './telemetry/observers.js';
