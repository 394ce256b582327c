// What receive answers when something it did not expect throws (a bug of ours, an input whose headers cannot be
// read): a clean, retryable 500 internal_error, logged with its cause, never a crash and never a 2xx. And logger:
// false keeps the default console logger quiet.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { LogEntry } from './log/logger.js';
import { createReceiver } from './receiver.js';
import type { ReceiveInput } from './receiver-types.js';

const secrets = { '1': 'internal-error-secret' };

/** A delivery whose headers throw when read, as a framework's lazy header accessor might. */
function inputWithThrowingHeaders(cause: Error): ReceiveInput {
  return {
    method: 'POST',
    get headers(): ReceiveInput['headers'] {
      throw cause;
    },
    body: '{}',
  };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('receive answers what throws unexpectedly with 500 internal_error', () => {
  it('answers a retryable 500 internal_error, runs no handler and logs the cause', async () => {
    const logs: LogEntry[] = [];
    const receiver = createReceiver({ secrets, logger: (entry) => logs.push(entry) });
    let handled = 0;
    receiver.onAny(() => void (handled += 1));
    const answer = await receiver.receive(inputWithThrowingHeaders(new Error('headers are gone')));
    expect({ status: answer.status, code: answer.code, body: answer.body, handled }).toEqual({
      status: 500,
      code: 'internal_error',
      body: {
        error: { code: 'internal_error', message: 'The receiver failed unexpectedly; the delivery will be retried.' },
      },
      handled: 0,
    });
    expect(logs).toEqual([
      expect.objectContaining({
        level: 'error',
        code: 'internal_error',
        error: expect.objectContaining({ message: 'headers are gone' }),
      }),
    ]);
  });
});

describe('logger: false', () => {
  it('writes nothing to the console for a refused delivery', async () => {
    const writes = (['log', 'info', 'warn', 'error', 'debug'] as const).map((method) =>
      vi.spyOn(console, method).mockImplementation(() => {}),
    );
    const receiver = createReceiver({ secrets, logger: false });
    const answer = await receiver.receive(inputWithThrowingHeaders(new Error('headers are gone')));
    expect(answer.code).toBe('internal_error');
    expect(writes.flatMap((write) => write.mock.calls)).toEqual([]);
  });

  it('without it, the default console logger writes the refusal', async () => {
    const writes = (['log', 'info', 'warn', 'error', 'debug'] as const).map((method) =>
      vi.spyOn(console, method).mockImplementation(() => {}),
    );
    const receiver = createReceiver({ secrets });
    await receiver.receive(inputWithThrowingHeaders(new Error('headers are gone')));
    expect(writes.flatMap((write) => write.mock.calls)).not.toEqual([]);
  });
});
