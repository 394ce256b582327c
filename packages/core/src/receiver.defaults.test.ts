// What a receiver does with the options left out, and the detail a malformed envelope leaves for the logger.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, testEvents, type TestSigner } from '../test-kit.js';
import type { LogEntry } from './log/logger.js';
import { createReceiver } from './receiver.js';

const START = Date.UTC(2026, 10, 23, 8, 0, 0);
const SECRET = 'defaults-secret';
let clock = START;
let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: () => clock, secrets: { '1': SECRET } });
});

describe('defaults', () => {
  it("reports orderingMode 'off' without the ordering option", () => {
    expect(createReceiver({ secrets: { '1': SECRET } }).orderingMode).toBe('off');
  });

  it('keeps the records of its default store by its own clock: a redelivery after retainMs runs the handler again', async () => {
    clock = START;
    const receiver = createReceiver({ secrets: { '1': SECRET }, now: () => clock, retainMs: 60_000, logger: false });
    let runs = 0;
    receiver.onAny(() => {
      runs += 1;
    });
    const event = testEvents.dataRequestPendingApproval();
    const deliver = async () => {
      const { headers, body } = await signer.sign(event);
      return receiver.receive({ method: 'POST', headers, body });
    };
    await deliver();
    expect((await deliver()).code).toBe('duplicate');
    clock += 60_001;
    const answer = await deliver();
    expect({ status: answer.status, code: answer.code, runs }).toEqual({ status: 200, code: undefined, runs: 2 });
  });
});

describe('the detail of envelope_invalid names what failed, never a value', () => {
  async function detailFor(body: string): Promise<string | undefined> {
    clock = START;
    const logs: LogEntry[] = [];
    const receiver = createReceiver({
      secrets: { '1': SECRET },
      now: () => clock,
      logger: (entry) => logs.push(entry),
    });
    const headers = { 'content-type': 'application/json', 'service-kyb-signature': signer.hmacHeader(body) };
    expect((await receiver.receive({ method: 'POST', headers, body })).code).toBe('envelope_invalid');
    return logs[0]?.detail;
  }

  it('calls the whole body (root) when it is not an object', async () => {
    expect(await detailFor('[]')).toBe('(root): invalid_type');
  });

  it('lists at most five problems, separated by semicolons', async () => {
    const detail = await detailFor('{}');
    const problems = detail?.split('; ') ?? [];
    expect(problems).toHaveLength(5);
    for (const problem of problems) expect(problem).toMatch(/^[a-z_]+: invalid_type$/);
  });
});
