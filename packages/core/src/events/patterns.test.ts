// The envelope's patterns, and rememberingTest: the same answers as the pattern's own test, with a repeat of the last
// string that passed answered without running the pattern again.
import { describe, expect, it, vi } from 'vitest';
import { EVENT_TYPE_PATTERN, rememberingTest, ULID_PATTERN } from './patterns.js';

describe('envelope patterns', () => {
  it('match a ULID (either case, first character 0–7) and an event type of printable ASCII', () => {
    expect(['01JD2Z3K4M5N6P7Q8R9S0T1V2W', '7zzzzzzzzzzzzzzzzzzzzzzzzz'].map((id) => ULID_PATTERN.test(id))).toEqual([
      true,
      true,
    ]);
    expect(
      ['81JD2Z3K4M5N6P7Q8R9S0T1V2W', '01JD2Z3K4M5N6P7Q8R9S0T1V2', '01JD2Z3K4M5N6P7Q8R9S0T1V2U'].map((id) =>
        ULID_PATTERN.test(id),
      ),
    ).toEqual([false, false, false]);
    expect(['kyb.data_request.released', 'x'.repeat(200)].map((type) => EVENT_TYPE_PATTERN.test(type))).toEqual([
      true,
      true,
    ]);
    expect(['', 'x'.repeat(201), 'a b', 'é'].map((type) => EVENT_TYPE_PATTERN.test(type))).toEqual([
      false,
      false,
      false,
      false,
    ]);
  });
});

describe('ULID_PATTERN', () => {
  it('matches what the case-insensitive pattern matches, for every UTF-16 code unit in either class', () => {
    // The pattern lists the lower-case letters instead of using the i flag (cheaper in V8); the answers must not move.
    const caseInsensitive = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/i;
    const disagreements: string[] = [];
    for (let code = 0; code <= 0xffff; code++) {
      const unit = String.fromCharCode(code);
      for (const id of [`${unit}1JD2Z3K4M5N6P7Q8R9S0T1V2W`, `01JD2Z3K4M5N6P7Q8R9S0T${unit}V2W`]) {
        if (ULID_PATTERN.test(id) !== caseInsensitive.test(id)) disagreements.push(id);
      }
    }
    expect(disagreements).toEqual([]);
    expect(ULID_PATTERN.flags).toBe('');
    // Anchored at both ends: a valid id with one character more before or after is not an id.
    expect(['x01JD2Z3K4M5N6P7Q8R9S0T1V2W', '01JD2Z3K4M5N6P7Q8R9S0T1V2WX'].map((id) => ULID_PATTERN.test(id))).toEqual([
      false,
      false,
    ]);
  });
});

describe('rememberingTest', () => {
  it("answers as the pattern's test, running it again only for a string other than the last that passed", () => {
    const pattern = /^\d{4}-\d{2}-\d{2}$/;
    const test = vi.spyOn(pattern, 'test');
    const isDate = rememberingTest(pattern);
    const answers = ['2026-01-01', '2026-01-01', 'x', '2026-01-01', '2026-02-01', '2026-01-01', '2026-02-01'].map(
      (text) => isDate(text),
    );
    expect(answers).toEqual([true, true, false, true, true, true, true]);
    // Run for the first, 'x', '2026-02-01' and the '2026-01-01' after it: a string that failed is never remembered.
    expect(test.mock.calls.map(([text]) => text)).toEqual([
      '2026-01-01',
      'x',
      '2026-02-01',
      '2026-01-01',
      '2026-02-01',
    ]);
  });

  it('never remembers a string that failed', () => {
    const pattern = /^a$/;
    const test = vi.spyOn(pattern, 'test');
    const isA = rememberingTest(pattern);
    expect([isA('b'), isA('b')]).toEqual([false, false]);
    expect(test).toHaveBeenCalledTimes(2);
  });

  it('tests a /g or /y pattern from the start every time, as zod does', () => {
    for (const flags of ['g', 'y']) {
      const pattern = new RegExp('a', flags);
      const hasA = rememberingTest(pattern);
      expect([hasA('a'), hasA('ba'.slice(1)), hasA('aa'), hasA('aa'.slice(0, 1))]).toEqual([true, true, true, true]);
      pattern.lastIndex = 5;
      expect(hasA('ab')).toBe(true);
    }
    const plain = /a/;
    plain.lastIndex = 5;
    expect(rememberingTest(plain)('a')).toBe(true);
  });
});
