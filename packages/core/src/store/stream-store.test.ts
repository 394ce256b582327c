import { describe, expect, it } from 'vitest';
import { createMemoryStore } from './memory-store.js';
import { checkStreamArguments, isStreamCursorStore } from './stream-store.js';

describe('isStreamCursorStore', () => {
  const dedupeOnly = {
    claim: async () => ({ status: 'in_progress' as const }),
    complete: async () => true,
    release: async () => true,
  };

  it('recognises the memory store, which keeps stream cursors', () => {
    expect(isStreamCursorStore(createMemoryStore())).toBe(true);
  });

  it('answers false for a custom DedupeStore written before cursors existed', () => {
    expect(isStreamCursorStore(dedupeOnly)).toBe(false);
  });

  it.each(['getCursor', 'completeInOrder', 'advanceCursor'])('answers false when %s is missing', (missing) => {
    const store: Record<string, unknown> = {
      ...dedupeOnly,
      getCursor: async () => null,
      completeInOrder: async () => 'completed',
      advanceCursor: async () => true,
    };
    delete store[missing];
    expect(isStreamCursorStore(store as never)).toBe(false);
  });

  it.each([null, undefined])('answers false for %s instead of throwing', (value) => {
    expect(isStreamCursorStore(value as never)).toBe(false);
  });
});

describe('checkStreamArguments', () => {
  it.each([
    ['req_1', 0, 0],
    ['req_1', 0, 1],
    ['x'.repeat(255), Number.MAX_SAFE_INTEGER, undefined],
  ])('accepts stream %#', (streamId, seq, firstSeq) => {
    expect(() => checkStreamArguments(streamId as string, seq as number, firstSeq as number | undefined)).not.toThrow();
  });

  it.each([
    ['', 0, undefined, /stream id must be a string of 1 to 255/],
    ['x'.repeat(256), 0, undefined, /stream id/],
    [42, 0, undefined, /stream id/],
    ['req_1', -1, undefined, /non-negative safe integer/],
    ['req_1', 0.5, undefined, /non-negative safe integer/],
    ['req_1', Number.NaN, undefined, /non-negative safe integer/],
    ['req_1', '3', undefined, /non-negative safe integer/],
    ['req_1', 3, 2, /firstSeq must be 0 or 1/],
  ])('refuses case %# with a RangeError saying what is expected', (streamId, seq, firstSeq, message) => {
    expect(() => checkStreamArguments(streamId as string, seq as number, firstSeq as number | undefined)).toThrow(
      RangeError,
    );
    expect(() => checkStreamArguments(streamId as string, seq as number, firstSeq as number | undefined)).toThrow(
      message as RegExp,
    );
  });
});
