/**
 * What the core's tests borrow from the other packages of the workspace, in one place: the test kit
 * (`@kyb-webhooks/testing`: signer, fixtures, JWKS server, service, adapter conformance suite) and the client's
 * `KybApiError`. Both packages depend on the core, so the core cannot depend on them by name; its tests import their
 * sources through this file instead of each reaching into another package's `src`. The helpers several of the core's
 * test files share are here too.
 */
import { expect } from 'vitest';
import { KybWebhookError } from './src/errors.js';

export * from '../testing/src/index.js';
export {
  runAdapterConformance,
  runAdapterOptionCases,
  serveFetchOnLoopback,
} from '../testing/src/adapter-suite/index.js';
export { KybApiError } from '../client/src/errors.js';

/**
 * The message of the config_invalid error `run` throws; fails the test when it throws nothing or something else.
 *
 * @example
 * ```ts
 * expect(configInvalidMessage(() => createReceiver({ secrets: {} }))).toContain('secrets')
 * ```
 */
export function configInvalidMessage(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(KybWebhookError);
    expect((error as KybWebhookError).code).toBe('config_invalid');
    return (error as KybWebhookError).message;
  }
  throw new Error('expected a config_invalid error, nothing was thrown');
}
