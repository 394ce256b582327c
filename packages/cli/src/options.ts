import { InvalidArgumentError, Option, type Command } from 'commander';
import { TEST_EVENT_TYPES, type TestEventType } from '@kyb-webhooks/testing';
import { DEFAULT_KEYS_FILE } from './dev-keys.js';
import { usageError } from './errors.js';

/**
 * The longest timer Node runs as asked: a larger delay fires at once (it is clamped to 1 ms), which would turn
 * `--timeout` into "fail every delivery".
 *
 * @example
 * ```ts
 * parseIntegerInRange(1, MAX_TIMEOUT_MS)('10000') // 10000
 * ```
 */
export const MAX_TIMEOUT_MS = 2_147_483_647;

/**
 * The options every sending command shares.
 *
 * @example
 * ```ts
 * const { to, keys, json, timeout } = command.opts<SendingOptions>()
 * ```
 */
export interface CommonOptions {
  keys: string;
  json?: boolean;
}

/**
 * Options of commands that deliver to an app.
 *
 * @example
 * ```ts
 * const options: SendingOptions = { to: 'http://127.0.0.1:3000/webhooks/kyb', keys: '.kyb-webhooks/dev-keys.json', timeout: 10_000 }
 * ```
 */
export interface SendingOptions extends CommonOptions {
  to: string;
  timeout: number;
  save?: string;
}

/**
 * Adds `--keys` and `--json` to a command.
 *
 * @example
 * ```ts
 * withCommonOptions(program.command('keys'))
 * ```
 */
export function withCommonOptions(command: Command): Command {
  return command
    .option(
      '--keys <file>',
      'development keys and secrets (keys, send and scenario create it on first use, mode 0600)',
      DEFAULT_KEYS_FILE,
    )
    .option('--json', 'print the result as JSON for scripts');
}

/**
 * Adds `--to`, `--timeout`, `--save` (and the common options) to a command that delivers.
 *
 * @example
 * ```ts
 * withSendingOptions(program.command('send'))
 * ```
 */
export function withSendingOptions(command: Command): Command {
  return withCommonOptions(command)
    .requiredOption(
      '--to <url>',
      'the webhook endpoint of your dev server, e.g. http://127.0.0.1:3000/webhooks/kyb',
      parseUrl,
    )
    .addOption(
      new Option('--timeout <ms>', 'per-delivery timeout in milliseconds')
        .default(10_000)
        .argParser(parseIntegerInRange(1, MAX_TIMEOUT_MS)),
    )
    .option('--save <dir>', 'write each delivery sent as a capture file into <dir> (for verify and replay)');
}

/**
 * Commander parser for `--to`: an absolute http(s) URL without a user name or password. A URL with credentials is
 * refused with an error of our own, because commander quotes the rejected value, password included; fetch would
 * refuse it anyway.
 *
 * @example
 * ```ts
 * parseUrl('http://127.0.0.1:3000/webhooks/kyb')
 * ```
 */
export function parseUrl(value: string): string {
  // A value with `@` is judged here, never by commander, which quotes a rejected value: it may carry a password, in
  // any of the forms URL parsing accepts (`http://user:pw@host`, `http:user:pw@host`, `http:\\user:pw@host`).
  if (value.includes('@')) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(value);
    } catch {
      throw usageError(
        '--to is not a valid URL (not shown: it contains "@", which may be a password): give the URL of your webhook route, e.g. http://127.0.0.1:3000/webhooks/kyb.',
      );
    }
    if (parsed.username !== '' || parsed.password !== '') {
      throw usageError(
        '--to must not contain a user name or password (user:password@): give the URL of the webhook route without them; the CLI does not send credentials.',
      );
    }
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError('expected an absolute URL, e.g. http://127.0.0.1:3000/webhooks/kyb');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new InvalidArgumentError('expected an http:// or https:// URL');
  return url.toString();
}

/**
 * `--to` as the output shows it: its query string as `?…` and its fragment left out, since they may hold an access
 * token (as a value, or as a bare `?token`).
 *
 * @example
 * ```ts
 * displayUrl('http://127.0.0.1:3000/webhooks/kyb?token=abc') // 'http://127.0.0.1:3000/webhooks/kyb?…'
 * ```
 */
export function displayUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return '(the --to URL)';
  }
  return `${url.origin}${url.pathname}${url.search === '' ? '' : '?\u2026'}`;
}

/**
 * Commander parser for integers of at least `min`.
 *
 * @example
 * ```ts
 * new Option('--seq <n>').argParser(parseIntegerAtLeast(0))
 * ```
 */
export function parseIntegerAtLeast(min: number): (value: string) => number {
  return (value) => {
    const number = Number(value);
    if (!/^-?\d+$/.test(value.trim()) || !Number.isSafeInteger(number) || number < min) {
      throw new InvalidArgumentError(`expected an integer \u2265 ${min}`);
    }
    return number;
  };
}

/**
 * Commander parser for integers from `min` to `max`.
 *
 * @example
 * ```ts
 * new Option('--timeout <ms>').argParser(parseIntegerInRange(1, MAX_TIMEOUT_MS))
 * ```
 */
export function parseIntegerInRange(min: number, max: number): (value: string) => number {
  return (value) => {
    const number = Number(value);
    if (!/^-?\d+$/.test(value.trim()) || !Number.isSafeInteger(number) || number < min || number > max) {
      throw new InvalidArgumentError(`expected an integer from ${min} to ${max}`);
    }
    return number;
  };
}

/**
 * Accepts an event type with or without its `kyb.` prefix.
 *
 * @example
 * ```ts
 * parseEventType('data_request.released') // 'kyb.data_request.released'
 * ```
 */
export function parseEventType(value: string): TestEventType {
  const full = value.startsWith('kyb.') ? value : `kyb.${value}`;
  const found = TEST_EVENT_TYPES.find((type) => type === full);
  if (!found)
    throw new InvalidArgumentError(
      `expected one of: ${TEST_EVENT_TYPES.map((type) => type.slice(4)).join(', ')} (with or without "kyb.")`,
    );
  return found;
}

/**
 * Commander parser for `--data`: a JSON object.
 *
 * @example
 * ```ts
 * parseJsonObject('{"price":null}') // { price: null }
 * ```
 */
export function parseJsonObject(value: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new InvalidArgumentError(
      'expected a JSON object, e.g. --data \'{"offer_id":"offer_42"}\' (quote it for your shell)',
    );
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new InvalidArgumentError('expected a JSON object, e.g. {"offer_id":"offer_42"}');
  return parsed as Record<string, unknown>;
}
