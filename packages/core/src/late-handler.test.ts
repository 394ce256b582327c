// What operators and onError handlers see after a delivery's handlers go wrong (issue 11 §5, mutation survivors): a
// handler that outlived handlerTimeoutMs and then succeeded leaves a warning that its success was recorded, and an
// onError handler that rejects never becomes an unhandled rejection.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, testEvents, type TestSigner } from '../../testing/src/index.js';
import type { LogEntry } from './logger.js';
import { createReceiver } from './receiver.js';

let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ secrets: { '1': 'endpoint-secret' } });
});

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => void unhandled.push(reason);
process.on('unhandledRejection', onUnhandled);
afterEach(() => {
  unhandled.length = 0;
});
afterAll(() => {
  process.off('unhandledRejection', onUnhandled);
});

function setup() {
  const logs: LogEntry[] = [];
  const receiver = createReceiver({ secrets: { '1': 'endpoint-secret' }, logger: (entry) => logs.push(entry), handlerTimeoutMs: 30, storeTimeoutMs: 50, leaseMs: 1_000 });
  const deliver = async () => {
    const { headers, body } = await signer.sign(testEvents.dataRequestRefused());
    return receiver.receive({ method: 'POST', headers, body });
  };
  return { receiver, deliver, logs };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a handler that finishes after handlerTimeoutMs', () => {
  it('leaves a warning that its late success was recorded', async () => {
    const { receiver, deliver, logs } = setup();
    let finish!: () => void;
    receiver.on('kyb.data_request.refused', () => new Promise<void>((resolve) => (finish = resolve)));
    expect((await deliver()).code).toBe('handler_timeout');
    finish();
    await sleep(20);
    expect(logs.filter((entry) => entry.level === 'warn' && /finished later; its success was recorded/.test(entry.message))).toHaveLength(1);
  });

  it('leaves no such warning for a handler that finished in time', async () => {
    const { receiver, deliver, logs } = setup();
    receiver.on('kyb.data_request.refused', async () => {});
    expect((await deliver()).status).toBe(200);
    await sleep(20);
    expect(logs.filter((entry) => entry.level === 'warn')).toEqual([]);
  });
});

describe('an onError handler that rejects', () => {
  it('changes nothing in the answer and raises no unhandled rejection', async () => {
    const { receiver, deliver } = setup();
    receiver.on('kyb.data_request.refused', () => {
      throw new Error('handler failed');
    });
    receiver.onError(async () => {
      throw new Error('onError failed too');
    });
    const result = await deliver();
    await sleep(20);
    expect({ code: result.code, unhandled: unhandled.length }).toEqual({ code: 'handler_failed', unhandled: 0 });
  });
});
