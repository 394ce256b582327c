import { KybWebhookError, type StreamCursorStore } from '@kyb-webhooks/core';
import type { RecoverOptions, RecoverTarget } from './recover.js';

/**
 * Events replayed between two progress reports within one stream, by default.
 *
 * @example
 * ```ts
 * await recover(target, { onProgress, progressEvery: DEFAULT_PROGRESS_EVERY * 10 })
 * ```
 */
export const DEFAULT_PROGRESS_EVERY = 100;

/**
 * `recover()`'s options as checked: each refused with `config_invalid` and the fix when it is not what its type says,
 * so that `reactivate: 'no'` does not reactivate and a `progressEvery` of 0 does not report on every event.
 *
 * @example
 * ```ts
 * const { concurrency, progressEvery } = checkOptions({ concurrency: 2 })
 * ```
 */
export interface CheckedOptions {
  progressEvery: number;
  concurrency: number;
  reactivate: boolean;
  signal: AbortSignal | undefined;
  onProgress: RecoverOptions['onProgress'];
}

/**
 * The options of `recover()`, checked, with their defaults.
 *
 * @example
 * ```ts
 * checkOptions({ reactivate: false }) // { progressEvery: 100, concurrency: 1, reactivate: false, … }
 * ```
 */
export function checkOptions(options: RecoverOptions | undefined): CheckedOptions {
  if (options === undefined) options = {};
  if (options === null || typeof options !== 'object')
    throw configInvalid('recover: the options must be an object, e.g. { reactivate: false }.');
  const { onProgress, reactivate, signal } = options;
  if (onProgress !== undefined && typeof onProgress !== 'function')
    throw configInvalid('recover: `onProgress` must be a function, e.g. (p) => console.log(p.kind, p.requestId).');
  if (reactivate !== undefined && typeof reactivate !== 'boolean')
    throw configInvalid('recover: `reactivate` must be true or false (default true).');
  if (signal !== undefined && !isAbortSignal(signal))
    throw configInvalid('recover: `signal` must be an AbortSignal, e.g. AbortSignal.timeout(600_000).');
  return {
    progressEvery: checkPositiveInteger('progressEvery', options.progressEvery, DEFAULT_PROGRESS_EVERY),
    concurrency: checkPositiveInteger('concurrency', options.concurrency, 1),
    reactivate: reactivate ?? true,
    signal,
    onProgress,
  };
}

/**
 * The target of `recover()`, checked: a KYB client, a receiver, and which streams.
 *
 * @example
 * ```ts
 * const { client, receiver, store } = checkTarget({ client, receiver, requestIds: ['dr_1'] })
 * ```
 */
export function checkTarget(target: RecoverTarget): RecoverTarget & { store: StreamCursorStore | undefined } {
  const fix = 'call recover({ client, receiver, requestIds: [...] }) or recover({ client, receiver, store, since })';
  if (!target || typeof target !== 'object')
    throw configInvalid(`recover: the first argument must be an object: ${fix}.`);
  const { client, receiver, store, since, requestIds } = target;
  if (
    !client ||
    typeof client.deliveries !== 'function' ||
    typeof client.events !== 'function' ||
    typeof client.reactivate !== 'function'
  ) {
    throw configInvalid('recover: `client` must be a KYB client: createKybClient({ baseUrl, apiKey }).');
  }
  if (!receiver || typeof receiver.replay !== 'function') {
    throw configInvalid(
      'recover: `receiver` must be the receiver your webhooks go through (createReceiver(...)), handlers registered.',
    );
  }
  if (receiver.skipsUnfillable !== undefined && typeof receiver.skipsUnfillable !== 'boolean')
    throw configInvalid('recover: `receiver.skipsUnfillable` must be true or false (left out: true).');
  if (since === undefined && requestIds === undefined) throw configInvalid(`recover: say which streams: ${fix}.`);
  if (
    requestIds !== undefined &&
    (!Array.isArray(requestIds) || requestIds.some((id) => typeof id !== 'string' || id === ''))
  ) {
    throw configInvalid('recover: `requestIds` must be an array of request ids (non-empty strings).');
  }
  if (since !== undefined) {
    const time = since instanceof Date ? since.getTime() : since;
    if (typeof time !== 'number' || !Number.isFinite(time))
      throw configInvalid('recover: `since` must be a Date or Unix milliseconds.');
    if (!store || typeof store.listStreams !== 'function') {
      throw configInvalid(
        "recover: `since` needs `store`, the receiver's store, which lists the streams it saw (every built-in store does).",
      );
    }
  }
  if (store !== undefined && (typeof store !== 'object' || typeof store.getCursor !== 'function')) {
    throw configInvalid(
      "recover: `store` must be the receiver's store (createMemoryStore, createRedisStore, createPostgresStore …).",
    );
  }
  return { ...target, store };
}

function checkPositiveInteger(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1)
    throw configInvalid(`recover: \`${name}\` must be a positive integer, e.g. ${fallback}.`);
  return value;
}

function configInvalid(message: string): KybWebhookError {
  return new KybWebhookError('config_invalid', message);
}

/** An AbortSignal of this realm or another (a test runner's, a polyfill's): what `recover()` uses of one. */
function isAbortSignal(value: unknown): value is AbortSignal {
  if (value instanceof AbortSignal) return true;
  const signal = value as AbortSignal | null;
  return (
    typeof signal === 'object' &&
    signal !== null &&
    typeof signal.aborted === 'boolean' &&
    typeof signal.throwIfAborted === 'function' &&
    typeof signal.addEventListener === 'function' &&
    typeof signal.removeEventListener === 'function'
  );
}
