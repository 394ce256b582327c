import { describe, expect, it } from 'vitest';
import { createReceiver } from './receiver.js';
import type { LogEntry } from './log/logger.js';

// receiver.replay never throws, except with the signal's reason when the caller aborted it: anything else that goes
// wrong while an event is replayed becomes a 500 internal_error answer, logged, like a delivery's.

/** A fetched "event" whose every property access throws `error`, after running `before` (a lazy response object). */
function throwingEvent(error: unknown, before: () => void = () => {}): unknown {
  const fail = (): never => {
    before();
    throw error;
  };
  return new Proxy({}, { get: fail, has: fail, ownKeys: fail, getOwnPropertyDescriptor: fail, getPrototypeOf: fail });
}

function setup() {
  const logs: LogEntry[] = [];
  const receiver = createReceiver({ secrets: { '1': 'replay-secret' }, logger: (entry) => logs.push(entry) });
  let ran = 0;
  receiver.onAny(() => void ran++);
  return { receiver, logs, ran: () => ran };
}

const INTERNAL_ERROR = {
  status: 500,
  code: 'internal_error',
  body: {
    error: { code: 'internal_error', message: 'The receiver failed unexpectedly; the delivery will be retried.' },
  },
};

describe('receiver.replay answers internal_error when reading the event throws', () => {
  it('without options', async () => {
    const { receiver, logs, ran } = setup();
    await expect(receiver.replay(throwingEvent(new Error('response body already used')))).resolves.toMatchObject(
      INTERNAL_ERROR,
    );
    expect(logs.map((entry) => entry.code)).toContain('internal_error');
    expect(ran()).toBe(0);
  });

  it('with options but no signal', async () => {
    const { receiver } = setup();
    await expect(receiver.replay(throwingEvent(new Error('response body already used')), {})).resolves.toMatchObject(
      INTERNAL_ERROR,
    );
  });

  it('with a signal that was not aborted', async () => {
    const { receiver } = setup();
    const controller = new AbortController();
    await expect(
      receiver.replay(throwingEvent(new Error('response body already used')), { signal: controller.signal }),
    ).resolves.toMatchObject(INTERNAL_ERROR);
  });

  it('with a signal aborted during the replay, when what was thrown is not the abort reason', async () => {
    const { receiver } = setup();
    const controller = new AbortController();
    const event = throwingEvent(new Error('response body already used'), () =>
      controller.abort(new Error('recovery cancelled')),
    );
    await expect(receiver.replay(event, { signal: controller.signal })).resolves.toMatchObject(INTERNAL_ERROR);
    expect(controller.signal.aborted).toBe(true);
  });
});

describe('receiver.replay rejects with the abort reason', () => {
  it('when the signal is aborted during the replay and the abort reason is what was thrown', async () => {
    const { receiver, ran } = setup();
    const controller = new AbortController();
    const reason = new Error('recovery cancelled');
    const event = throwingEvent(reason, () => controller.abort(reason));
    await expect(receiver.replay(event, { signal: controller.signal })).rejects.toBe(reason);
    expect(ran()).toBe(0);
  });
});
