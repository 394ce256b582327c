import { createReceiver, KybWebhookError } from '@kyb-webhooks/core';
import { describe, expect, it } from 'vitest';
import { kybWebhooks } from './index.js';

const receiver = createReceiver({ secrets: { '3': 'whsec_test' } });

function configError(run: () => unknown): KybWebhookError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(KybWebhookError);
    return error as KybWebhookError;
  }
  throw new Error('expected config_invalid, nothing was thrown');
}

describe('express kybWebhooks refuses a bad configuration at creation', () => {
  it.each<[string, unknown, unknown, string[]]>([
    ['no receiver', undefined, undefined, ['`receiver` is missing']],
    ['receiver options instead of a receiver', { secrets: { '3': 'x' } }, undefined, ['`receiver` looks like receiver options', 'createReceiver(options)']],
    ['the createReceiver function', createReceiver, undefined, ['`receiver` is a function, not a receiver']],
    ['a string as receiver', 'receiver', undefined, ['`receiver` is not a receiver', 'createReceiver(']],
    ['null options', receiver, null, ['needs an options object']],
    ['a misspelt onResult', receiver, { onResults: () => {} }, ['`onResults` is not an option: did you mean `onResult`?']],
    ['an option of another adapter', receiver, { path: '/webhooks/kyb' }, ['`path` is not an option; the options are onResult.']],
    ['onResult that is not a function', receiver, { onResult: 'metrics' }, ['`onResult` must be a function', 'got a string']],
  ])('%s', (_name, candidate, options, words) => {
    const error = configError(() => kybWebhooks(candidate as never, options as never));
    expect(error.code).toBe('config_invalid');
    expect(error.message).toContain('kybWebhooks (@kyb-webhooks/express)');
    for (const word of words) expect(error.message).toContain(word);
  });

  it.each<[string, unknown]>([
    ['no options', undefined],
    ['empty options', {}],
    ['onResult', { onResult: () => {} }],
  ])('accepts %s', (_name, options) => {
    expect(typeof kybWebhooks(receiver, options as never)).toBe('function');
  });
});
