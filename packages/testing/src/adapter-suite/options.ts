/**
 * The adapters' configuration contract: every adapter factory refuses a bad receiver or bad options at creation
 * with `config_invalid`, naming the option and the fix. The receiver cases are the same for every adapter; each
 * adapter adds the cases of its own options.
 */
import { createReceiver, type Receiver } from '@kyb-webhooks/core';
import { describe, expect, it } from 'vitest';
import { expectConfigInvalid } from '../config-invalid.js';

/**
 * Options of {@link runAdapterOptionCases}.
 *
 * @example
 * ```ts
 * const cases: AdapterOptionCases = { invalid: [['a path without a slash', { path: 'hooks' }, ["`path` must start with '/'"]]] }
 * ```
 */
export interface AdapterOptionCases {
  /** The adapter's own invalid options, each with the words its message must contain; the receiver is valid. */
  invalid?: [name: string, options: unknown, words: string[]][];
  /** Valid options beyond none, `{}` and `{ onResult }`. */
  valid?: [name: string, options: unknown][];
  /** The option names the adapter accepts, as its "the options are …" message lists them. Default `onResult`. */
  optionNames?: string;
}

/**
 * Registers the configuration cases of one adapter factory: a missing receiver, receiver options or the
 * `createReceiver` function in its place, a string, null options, a misspelt or foreign option and a non-function
 * `onResult` all throw `config_invalid` naming `owner`, and valid options create a handler.
 *
 * @example
 * ```ts
 * runAdapterOptionCases('kybWebhooks (@kyb-webhooks/express)', (receiver, options) => kybWebhooks(receiver, options))
 * ```
 */
export function runAdapterOptionCases(
  owner: string,
  create: (receiver: Receiver, options: never) => unknown,
  cases: AdapterOptionCases = {},
): void {
  const receiver = createReceiver({ secrets: { '3': 'whsec_test' } });
  const optionNames = cases.optionNames ?? 'onResult';
  describe(`${owner} refuses a bad configuration at creation`, () => {
    it.each<[string, unknown, unknown, string[]]>([
      ['no receiver', undefined, undefined, ['`receiver` is missing']],
      [
        'receiver options instead of a receiver',
        { secrets: { '3': 'x' } },
        undefined,
        ['`receiver` looks like receiver options', 'createReceiver(options)'],
      ],
      ['the createReceiver function', createReceiver, undefined, ['`receiver` is a function, not a receiver']],
      ['a string as receiver', 'receiver', undefined, ['`receiver` is not a receiver', 'createReceiver(']],
      ['null options', receiver, null, ['needs an options object']],
      [
        'a misspelt onResult',
        receiver,
        { onResults: () => {} },
        ['`onResults` is not an option: did you mean `onResult`?'],
      ],
      [
        'onResult that is not a function',
        receiver,
        { onResult: 'metrics' },
        ['`onResult` must be a function', 'got a string'],
      ],
      ['an option no adapter has', receiver, { secrets: {} }, [`\`secrets\` is not an option`, optionNames]],
      ...(cases.invalid ?? []).map(([name, options, words]): [string, unknown, unknown, string[]] => [
        name,
        receiver,
        options,
        words,
      ]),
    ])('%s', (_name, candidate, options, words) => {
      const error = expectConfigInvalid(() => create(candidate as Receiver, options as never), words);
      expect(error.message).toContain(owner);
    });

    it.each<[string, unknown]>([
      ['no options', undefined],
      ['empty options', {}],
      ['onResult', { onResult: () => {} }],
      ...(cases.valid ?? []),
    ])('accepts %s', (_name, options) => {
      expect(create(receiver, options as never)).toBeTruthy();
    });
  });
}
