import { describe, expect, it } from 'vitest';
import { createMemoryStore } from './memory-store.js';
import { readStreamPageToken, streamPageToken } from './stream-page-token.js';
import { MAX_STREAM_ID_LENGTH } from './stream-store.js';

const refusal = new RangeError('after must be the `next` of a previous page of the same store.');

describe('readStreamPageToken', () => {
  it.each([
    ['a plain id', 1_767_225_600_000, 'req_123'],
    ['an id with a colon', 5, 'a:b:c'],
    ['an id with spaces and a newline', 5, 'dr 1\nsecond line'],
    ['an id of MAX_STREAM_ID_LENGTH characters', 0, 'x'.repeat(MAX_STREAM_ID_LENGTH)],
    ['the largest safe activity', Number.MAX_SAFE_INTEGER, 's'],
  ])('reads back a token of %s', (_case, activeAt, streamId) => {
    expect(readStreamPageToken(streamPageToken(activeAt, streamId))).toEqual({ activeAt, streamId });
  });

  it.each([
    ['empty', ''],
    ['no stream id', '5:'],
    ['no colon', '5'],
    ['no activity', ':req_1'],
    ['a negative activity', '-1:req_1'],
    ['something before the activity', 'x5:req_1'],
    ['a fractional activity', '1.5:req_1'],
    ['17 digits', '12345678901234567:req_1'],
    ['an activity past the largest safe integer', '9999999999999999:req_1'],
    ['a stream id past MAX_STREAM_ID_LENGTH', `5:${'x'.repeat(MAX_STREAM_ID_LENGTH + 1)}`],
  ])('refuses a token with %s, saying what it must be', (_case, token) => {
    expect(() => readStreamPageToken(token)).toThrow(refusal);
  });
});

describe('listStreams page tokens (the memory store)', () => {
  it('pages through stream ids with spaces and colons, each listed once', async () => {
    const clock = 1_767_225_600_000;
    const store = createMemoryStore({ now: () => clock });
    const ids = ['a b', 'a:b', 'a\tb', 'c d'];
    for (const id of ids) await store.advanceCursor(id, 1);
    const seen: string[] = [];
    let after: string | undefined;
    do {
      const page = await store.listStreams!({ activeSince: 0, limit: 1, after });
      seen.push(...page.streams.map((stream) => stream.streamId));
      after = page.next;
    } while (after !== undefined);
    expect(seen).toEqual([...ids].sort());
  });

  it('refuses a token it did not write', async () => {
    await expect(createMemoryStore().listStreams!({ activeSince: 0, after: '-1:req_1' })).rejects.toThrow(refusal);
  });
});
