import { describe, expect, it } from 'vitest';
import { createMemoryStore } from './memory-store.js';
import {
  checkListStreamsOptions,
  checkSkipArguments,
  checkStreamArguments,
  cursorRetention,
  DEFAULT_CURSOR_RETAIN_MS,
  inOrderCursorRetention,
  isStreamCursorStore,
  MAX_LIST_STREAMS_LIMIT,
  MAX_SKIP_REASON_CHARS,
} from './stream-store.js';

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

describe('checkStreamArguments: a stream id not every store keeps as itself', () => {
  it('says what is wrong with it, without showing it', () => {
    expect(() => checkStreamArguments('req\u0000secret', 0)).toThrow(
      new RangeError('The stream id contains a NUL character, which not every store can keep.'),
    );
    expect(() => checkStreamArguments('req_\uD800secret', 0)).toThrow(
      new RangeError(
        'The stream id is not well-formed Unicode (a lone surrogate), which not every store keeps as itself.',
      ),
    );
  });
});

describe('checkSkipArguments', () => {
  const valid = { reason: 'release purged; ops ticket 42', retainMs: 60_000 };
  const reasonMessage =
    'reason must be a non-blank string of at most 500 characters: why the seq is skipped, and who decided.';
  const eventIdMessage = 'eventId must be a string of 1 to 255 characters when given.';
  const retainMessage = 'retainMs must be a positive number of milliseconds.';

  it('accepts a skip and resolves firstSeq, 0 by default', () => {
    expect(checkSkipArguments('dr_1', 4, valid)).toEqual({ firstSeq: 0 });
    expect(checkSkipArguments('dr_1', 1, { ...valid, firstSeq: 1 })).toEqual({ firstSeq: 1 });
  });

  it('accepts a reason of exactly MAX_SKIP_REASON_CHARS characters and an event id of exactly 255', () => {
    expect(() =>
      checkSkipArguments('dr_1', 4, { ...valid, reason: 'r'.repeat(MAX_SKIP_REASON_CHARS), eventId: 'e'.repeat(255) }),
    ).not.toThrow();
  });

  it('checks the stream arguments first, even when the options are missing', () => {
    expect(() => checkSkipArguments('', 4, undefined as never)).toThrow(
      new RangeError('The stream id must be a string of 1 to 255 characters.'),
    );
    expect(() => checkSkipArguments('dr_1', 4, { ...valid, firstSeq: 2 as never })).toThrow(/firstSeq must be 0 or 1/);
  });

  it.each([
    ['empty', ''],
    ['blank', ' \n\t '],
    ['too long', 'r'.repeat(MAX_SKIP_REASON_CHARS + 1)],
    ['not a string', 42],
    ['missing', undefined],
  ])('refuses a reason that is %s with a RangeError saying what is expected', (_case, reason) => {
    expect(() => checkSkipArguments('dr_1', 4, { ...valid, reason: reason as string })).toThrow(
      new RangeError(reasonMessage),
    );
  });

  it.each([
    ['empty', ''],
    ['too long', 'e'.repeat(256)],
    ['a number', 42],
    ['an array', ['01J9Z3']],
  ])('refuses an event id that is %s with a RangeError saying what is expected', (_case, eventId) => {
    expect(() => checkSkipArguments('dr_1', 4, { ...valid, eventId: eventId as string })).toThrow(
      new RangeError(eventIdMessage),
    );
  });

  it.each([
    ['zero', 0],
    ['negative', -1],
    ['NaN', Number.NaN],
    ['a numeric string', '60000'],
    ['missing', undefined],
  ])('refuses a retainMs that is %s with a RangeError saying what is expected', (_case, retainMs) => {
    expect(() => checkSkipArguments('dr_1', 4, { ...valid, retainMs: retainMs as number })).toThrow(
      new RangeError(retainMessage),
    );
  });

  it('accepts the smallest positive retention (the store rounds it up)', () => {
    expect(() => checkSkipArguments('dr_1', 4, { ...valid, retainMs: 0.5 })).not.toThrow();
  });
});

describe('checkListStreamsOptions', () => {
  const activeMessage = 'activeSince must be a finite number of Unix milliseconds, e.g. Date.now() - 86_400_000.';
  const limitMessage = 'limit must be an integer from 1 to 1000.';
  const afterMessage = 'after must be the `next` of a previous page of the same store.';

  it('resolves the default limit and whole milliseconds', () => {
    expect(checkListStreamsOptions({ activeSince: 1_000.7 })).toEqual({
      activeSince: 1_000,
      limit: 100,
      after: undefined,
    });
    expect(checkListStreamsOptions({ activeSince: 0, limit: MAX_LIST_STREAMS_LIMIT, after: '5:s' })).toEqual({
      activeSince: 0,
      limit: MAX_LIST_STREAMS_LIMIT,
      after: '5:s',
    });
    expect(checkListStreamsOptions({ activeSince: 0, limit: 1 }).limit).toBe(1);
  });

  it.each([
    ['missing', undefined],
    ['NaN', Number.NaN],
    ['infinite', Number.POSITIVE_INFINITY],
    ['a numeric string', '1767225600000'],
  ])('refuses an activeSince that is %s', (_case, activeSince) => {
    expect(() => checkListStreamsOptions({ activeSince: activeSince as number })).toThrow(
      new RangeError(activeMessage),
    );
  });

  it('refuses missing options as a missing activeSince', () => {
    expect(() => checkListStreamsOptions(undefined as never)).toThrow(new RangeError(activeMessage));
  });

  it.each([
    ['zero', 0],
    ['past the maximum', MAX_LIST_STREAMS_LIMIT + 1],
    ['a fraction', 1.5],
    ['a numeric string', '10'],
  ])('refuses a limit that is %s', (_case, limit) => {
    expect(() => checkListStreamsOptions({ activeSince: 0, limit: limit as number })).toThrow(
      new RangeError(limitMessage),
    );
  });

  it.each([
    ['empty', ''],
    ['a number', 42],
    ['an object', { activeAt: 5 }],
  ])('refuses an after that is %s', (_case, after) => {
    expect(() => checkListStreamsOptions({ activeSince: 0, after: after as string })).toThrow(
      new RangeError(afterMessage),
    );
  });

  it('refuses an empty after in a store, too (the memory store)', async () => {
    await expect(createMemoryStore().listStreams!({ activeSince: 0, after: '' })).rejects.toThrow(
      new RangeError(afterMessage),
    );
  });
});

describe('cursor retention', () => {
  const day = 86_400_000;

  it('defaults an advanceCursor retention to 400 days', () => {
    expect(DEFAULT_CURSOR_RETAIN_MS).toBe(400 * day);
    expect(cursorRetention(undefined)).toBe(400 * day);
    expect(cursorRetention({})).toBe(400 * day);
    expect(cursorRetention({ retainMs: 60_000 })).toBe(60_000);
  });

  it('keeps a cursor moved by advanceCursor for 400 days by default (the memory store)', async () => {
    let clock = 1_767_225_600_000;
    const store = createMemoryStore({ now: () => clock });
    expect(await store.advanceCursor('req_1', 3)).toBe(true);
    clock += 400 * day - 1;
    expect(await store.getCursor('req_1')).toBe(3);
    clock += 1;
    expect(await store.getCursor('req_1')).toBeNull();
  });

  it('never keeps a completeInOrder cursor for less than the record', () => {
    const base = { streamId: 'req_1', seq: 0, firstSeq: 0 as const };
    expect(inOrderCursorRetention({ ...base, retainMs: 600_000, cursorRetainMs: 60_000 })).toBe(600_000);
    expect(inOrderCursorRetention({ ...base, retainMs: 60_000, cursorRetainMs: 600_000 })).toBe(600_000);
    expect(inOrderCursorRetention({ ...base, retainMs: 60_000 })).toBe(60_000);
    expect(inOrderCursorRetention({ ...base, retainMs: 60_000, cursorRetainMs: 0 })).toBe(0);
  });

  it('keeps the cursor as long as the record when cursorRetainMs is shorter (the memory store)', async () => {
    let clock = 1_767_225_600_000;
    const store = createMemoryStore({ now: () => clock });
    const claim = store.claim('evt_1', { leaseMs: 60_000 });
    if (claim.status !== 'acquired') throw new Error('expected a claim');
    const options = { retainMs: 600_000, cursorRetainMs: 60_000, streamId: 'req_1', seq: 0, firstSeq: 0 as const };
    expect(await store.completeInOrder('evt_1', claim.token, options)).toBe('completed');
    clock += 600_000 - 1;
    expect(await store.getCursor('req_1')).toBe(0);
    clock += 1;
    expect(await store.getCursor('req_1')).toBeNull();
  });

  it('refuses a cursorRetainMs that is not positive instead of hiding it behind retainMs (the memory store)', async () => {
    const store = createMemoryStore();
    const claim = store.claim('evt_1', { leaseMs: 60_000 });
    if (claim.status !== 'acquired') throw new Error('expected a claim');
    const options = { retainMs: 600_000, cursorRetainMs: -1, streamId: 'req_1', seq: 0, firstSeq: 0 as const };
    await expect(store.completeInOrder('evt_1', claim.token, options)).rejects.toThrow(/cursorRetainMs must be/);
  });
});
