// The edges of log sanitising (issue 11 §7, mutation survivors): exactly how much text is kept, how deep and how
// wide an error is serialised, and which fields an entry carries when the caller gave none.
import { describe, expect, it } from 'vitest';
import { safeLog, sanitizeLogText, serializeError, type LogEntry, type SerializedError } from './logger.js';

/** How many levels of `cause` a serialised error carries below the top one. */
function causeDepth(serialized: SerializedError): number {
  let depth = 0;
  for (let at = serialized.cause; at; at = at.cause) depth += 1;
  return depth;
}

function logged(input: Parameters<typeof safeLog>[1]): LogEntry[] {
  const entries: LogEntry[] = [];
  safeLog((entry) => void entries.push(entry), input);
  return entries;
}

describe('sanitizeLogText', () => {
  it('keeps a text of exactly max characters whole, with no "more characters" note', () => {
    expect(sanitizeLogText('x'.repeat(10), 10)).toBe('x'.repeat(10));
  });

  it('keeps a whole surrogate pair inside the kept part when cutting', () => {
    expect(sanitizeLogText(`😀${'a'.repeat(20)}`, 10)).toBe(`😀${'a'.repeat(8)}…[12 more characters]`);
  });

  it('leaves a text under max as it is, even one ending on a high surrogate', () => {
    expect(sanitizeLogText('ab\ud83d', 10)).toBe('ab\ud83d');
  });
});

describe('serializeError', () => {
  it('gives a thrown non-Error value its type as name', () => {
    expect(serializeError(42)).toEqual({ name: 'number', message: 'a non-Error value was thrown (number)' });
  });

  it('serialises a thrown null without throwing', () => {
    expect(serializeError(null)).toEqual({ name: 'object', message: 'a non-Error value was thrown (null)' });
  });

  it('follows a cause chain exactly four levels down', () => {
    let error = new Error('level 6');
    for (let level = 5; level >= 0; level--) error = new Error(`level ${level}`, { cause: error });
    expect(causeDepth(serializeError(error))).toBe(4);
  });

  it('adds no cause to an error that has none', () => {
    expect(Object.keys(serializeError(new Error('alone')))).not.toContain('cause');
  });

  it('adds no errors list for an AggregateError of none', () => {
    expect(Object.keys(serializeError(new AggregateError([], 'none')))).not.toContain('errors');
  });

  it('lists at most five aggregated errors', () => {
    const many = new AggregateError(
      Array.from({ length: 8 }, (_, i) => new Error(`failure ${i}`)),
      'many',
    );
    expect(serializeError(many).errors?.map((error) => error.message)).toEqual([
      'failure 0',
      'failure 1',
      'failure 2',
      'failure 3',
      'failure 4',
    ]);
  });

  it('stops at four levels in aggregated errors that contain themselves', () => {
    const loop = new AggregateError([], 'loop');
    (loop as { errors: unknown[] }).errors = [loop];
    let depth = 0;
    for (let at: SerializedError | undefined = serializeError(loop); at?.errors; at = at.errors[0]) depth += 1;
    expect(depth).toBe(4);
  });

  it('serialises an error without a stack, leaving the stack out', () => {
    const error = new Error('no stack');
    delete (error as { stack?: string }).stack;
    expect(serializeError(error)).toEqual({ name: 'Error', message: 'no stack' });
  });
});

describe('safeLog', () => {
  it('sets only level and message when nothing else is given', () => {
    expect(logged({ level: 'info', message: 'hello' })).toStrictEqual([{ level: 'info', message: 'hello' }]);
  });

  it('carries every field it was given', () => {
    const [entry] = logged({
      level: 'warn',
      message: 'm',
      code: 'c',
      status: 503,
      eventId: 'evt',
      eventType: 'kyb.x',
      detail: 'd',
      error: new Error('e'),
    });
    expect({ ...entry, error: entry?.error?.message }).toStrictEqual({
      level: 'warn',
      message: 'm',
      code: 'c',
      status: 503,
      eventId: 'evt',
      eventType: 'kyb.x',
      detail: 'd',
      error: 'e',
    });
  });
});
