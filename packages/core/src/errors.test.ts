import { describe, expect, it } from 'vitest';
import { ERRORS, KybWebhookError } from './errors.js';
import { validateReceiverOptions } from './receiver-options.js';

// What a caller sees of a KybWebhookError: its name (in stack traces and `String(error)`), its code and, when it was
// created without a message, the default message of its code.

describe('KybWebhookError', () => {
  it("is named 'KybWebhookError', as String(error) shows", () => {
    const error = new KybWebhookError('config_invalid', 'createReceiver: `secrets` is empty.');
    expect(error.name).toBe('KybWebhookError');
    expect(String(error)).toBe('KybWebhookError: createReceiver: `secrets` is empty.');
  });

  it("is named 'KybWebhookError' when createReceiver refuses its options", () => {
    let caught: unknown;
    try {
      validateReceiverOptions({});
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(KybWebhookError);
    expect((caught as KybWebhookError).name).toBe('KybWebhookError');
    expect((caught as KybWebhookError).code).toBe('config_invalid');
  });

  it.each<[ConstructorParameters<typeof KybWebhookError>[0], string]>([
    ['config_invalid', 'Invalid receiver configuration.'],
    ['job_undecryptable', 'A queue job could not be decrypted.'],
    ['signature_mismatch', ERRORS.signature_mismatch.message],
    ['internal_error', ERRORS.internal_error.message],
  ])('created without a message, %s says %j', (code, message) => {
    const error = new KybWebhookError(code);
    expect(error.code).toBe(code);
    expect(error.message).toBe(message);
    expect(error.message).not.toBe('');
  });

  it('keeps a message it is given, and the cause', () => {
    const cause = new Error('decrypt failed');
    const error = new KybWebhookError('job_undecryptable', 'no key for kid k2', { cause, detail: 'kid k2' });
    expect(error.message).toBe('no key for kid k2');
    expect(error.cause).toBe(cause);
    expect(error.detail).toBe('kid k2');
  });
});
