/**
 * Issue 11 §7: a log entry never carries more than a few hundred characters of a value the sender chose, never a
 * raw control character, and errors in entries are plain serialisable data (not `{}`).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, testEvents, type TestSigner } from '../../test-kit.js';
import { HandlerError } from '../pipeline/dispatch.js';
import { logTaken, safeLog, sanitizeLogText, serializeError, takesLevel, type LogEntry } from './logger.js';
import { createReceiver } from '../receiver.js';
import { createConsoleLogger } from './console-logger.js';

let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ secrets: { '1': 'endpoint-secret' } });
});

function capture() {
  const entries: LogEntry[] = [];
  return { entries, logger: (entry: LogEntry) => entries.push(entry) };
}

describe('sanitizeLogText', () => {
  it('cuts a long value and says how much was dropped', () => {
    const text = sanitizeLogText('a'.repeat(600 * 1024));
    expect(text.length).toBeLessThan(400);
    expect(text).toMatch(/…\[614100 more characters\]$/);
  });

  it.each([
    ['a newline', 'x\ny', 'x\\u000ay'],
    ['a carriage return', 'x\ry', 'x\\u000dy'],
    ['an escape sequence', 'x\u001b[31my', 'x\\u001b[31my'],
    ['a NUL', 'x\u0000y', 'x\\u0000y'],
    ['a line separator', 'x\u2028y', 'x\\u2028y'],
    ['a right-to-left override', 'x\u202ey', 'x\\u202ey'],
    ['a C1 control', 'x\u0085y', 'x\\u0085y'],
  ])('escapes %s', (_name, input, expected) => {
    expect(sanitizeLogText(input)).toBe(expected);
  });

  it('never ends on half a surrogate pair', () => {
    const text = sanitizeLogText(`${'a'.repeat(299)}😀tail`);
    expect(text.startsWith(`${'a'.repeat(299)}…`)).toBe(true);
  });
});

describe('serializeError', () => {
  it('keeps name, message, code and the cause chain as plain data', () => {
    const cause = Object.assign(new TypeError('fetch failed'), { code: 'ECONNREFUSED' });
    const serialized = JSON.parse(JSON.stringify(serializeError(new Error('JWKS unavailable', { cause }))));
    expect(serialized).toMatchObject({
      name: 'Error',
      message: 'JWKS unavailable',
      cause: { name: 'TypeError', message: 'fetch failed', code: 'ECONNREFUSED' },
    });
    expect(serialized.stack).toMatch(/JWKS unavailable/);
  });

  it('lists the failures a HandlerError aggregates', () => {
    const serialized = serializeError(new HandlerError('kyb.x', '01J', [new Error('first'), new RangeError('second')]));
    expect(serialized.errors?.map((error) => error.message)).toEqual(['first', 'second']);
  });

  it("shows a HandlerError's first failure once, in its errors, not again as its cause (one stack per failure)", () => {
    const failure = new Error('db down');
    const serialized = serializeError(new HandlerError('kyb.x', '01J', [failure]));
    expect(serialized.cause).toBeUndefined();
    expect(serialized.errors).toEqual([expect.objectContaining({ message: 'db down' })]);
    expect(JSON.stringify(serialized).split('db down').length - 1).toBe(2); // its message and its stack's first line
  });

  it('keeps a cause that is not among the aggregated errors', () => {
    const error = new AggregateError([new Error('one')], 'several', { cause: new Error('why') });
    expect(serializeError(error)).toMatchObject({ cause: { message: 'why' }, errors: [{ message: 'one' }] });
  });

  it('keeps no text of a thrown non-Error value, which could be anything', () => {
    expect(JSON.stringify(serializeError('secret-token-value'))).not.toContain('secret-token-value');
  });

  it('stops following a cause chain that loops', () => {
    const error = new Error('loop');
    (error as { cause?: unknown }).cause = error;
    expect(() => JSON.stringify(serializeError(error))).not.toThrow();
  });
});

describe('entries the receiver logs', () => {
  it('carries at most a few hundred characters of a 600 KiB attestation typ', async () => {
    const { entries, logger } = capture();
    const receiver = createReceiver({
      secrets: { '1': 'endpoint-secret' },
      attestation: { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
      logger,
    });
    const envelope = testEvents.dataRequestReleased();
    const { headers, body } = await signer.sign(envelope, {
      header: { typ: `x${'\n'.repeat(10)}${'y'.repeat(600 * 1024)}` },
    });
    const result = await receiver.receive({ method: 'POST', headers, body });
    expect(result.code).toBe('attestation_invalid_typ');
    const line = JSON.stringify(entries);
    expect(line.length).toBeLessThan(2_000);
    expect(line).not.toMatch(/[\n\r]/);
  });

  it('logs a JWKS failure with its error as data, not {}', async () => {
    const { entries, logger } = capture();
    const receiver = createReceiver({
      secrets: { '1': 'endpoint-secret' },
      attestation: {
        issuer: signer.issuer,
        audience: signer.audience,
        jwksUrl: 'http://127.0.0.1:9/jwks.json',
        jwksTimeoutMs: 1_000,
      },
      logger,
    });
    const { headers, body } = await signer.sign(testEvents.dataRequestReleased());
    expect((await receiver.receive({ method: 'POST', headers, body })).code).toBe('jwks_unavailable');
    const entry = entries.find((candidate) => candidate.code === 'jwks_unavailable');
    expect(entry?.error?.name).toBeTruthy();
    expect(entry?.error?.message).toBeTruthy();
    expect(JSON.parse(JSON.stringify(entry?.error))).toEqual(entry?.error);
  });

  it('hands the logger already sanitised fields', () => {
    const { entries, logger } = capture();
    safeLog(logger, {
      level: 'warn',
      message: 'm',
      eventType: `kyb.${'x'.repeat(5_000)}`,
      detail: 'kid "a\u2028b"',
      error: new Error('e'),
    });
    expect(entries[0]!.eventType!.length).toBeLessThan(400);
    expect(entries[0]!.detail).toBe('kid "a\\u2028b"');
    expect(entries[0]!.error).toMatchObject({ name: 'Error', message: 'e' });
  });
});

describe('takesLevel', () => {
  it('says whether a logger takes a level: none never, a console logger from its level up, any other every level', () => {
    const levels = ['debug', 'info', 'warn', 'error'] as const;
    const warnAndUp = createConsoleLogger({ level: 'warn' });
    expect(levels.map((level) => takesLevel(warnAndUp, level))).toEqual([false, false, true, true]);
    expect(levels.map((level) => takesLevel(createConsoleLogger({ level: 'info' }), level))).toEqual([
      false,
      true,
      true,
      true,
    ]);
    expect(levels.map((level) => takesLevel(() => {}, level))).toEqual([true, true, true, true]);
    expect(levels.map((level) => takesLevel(undefined, level))).toEqual([false, false, false, false]);
  });
});

describe('logTaken', () => {
  it('hands a logger that takes the level a sanitised entry, and a logger that throws changes nothing', () => {
    const { entries, logger } = capture();
    logTaken(logger, { level: 'debug', message: 'delivery\nprocessed', eventId: 'evt\u2028x', status: 200 });
    expect(entries).toEqual([
      { level: 'debug', message: 'delivery\\u000aprocessed', eventId: 'evt\\u2028x', status: 200 },
    ]);
    const throwing = (): void => {
      throw new Error('logger down');
    };
    expect(() => logTaken(throwing, { level: 'error', message: 'm' })).not.toThrow();
  });
});
