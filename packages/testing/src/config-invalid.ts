import { KybWebhookError } from '@kyb-webhooks/core';
import { expect } from 'vitest';

/**
 * Runs `create` and returns the `config_invalid` error it must throw, after checking that its message names
 * `words` (the option, the fix). Fails the test when nothing, or anything else, is thrown.
 *
 * @example
 * ```ts
 * expectConfigInvalid(() => createRedisStore({ client, prefix: '' }), ['`prefix`'])
 * ```
 */
export function expectConfigInvalid(create: () => unknown, words: readonly string[] = []): KybWebhookError {
  let thrown: unknown;
  try {
    create();
  } catch (error) {
    thrown = error;
  }
  expect(thrown, 'expected config_invalid, nothing was thrown').toBeInstanceOf(KybWebhookError);
  const error = thrown as KybWebhookError;
  expect(error.code).toBe('config_invalid');
  for (const word of words) expect(error.message).toContain(word);
  return error;
}
