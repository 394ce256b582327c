// findReleasedAnswerList hands back the claims' own list when zod would accept it as it is, and zod's copy only
// where zod would not (an answer with an own "__proto__" key, as JSON.parse makes from a token's payload).
import { describe, expect, it } from 'vitest';
import { answersFromClaims, findReleasedAnswerList } from './answers-from-claims.js';

const answers = [
  { name: 'company_name', subject_type: 'business', subject: 'biz-1', value: 'Acme' },
  { name: 'director_full_name', subject_type: 'director', subject: 'subj-1', value: 'Ada Lovelace' },
];

describe('findReleasedAnswerList: the claims’ own list, or zod’s copy where zod makes one', () => {
  it('returns the very list the claims hold when every answer is plain', () => {
    const claims = { answers };
    expect(findReleasedAnswerList(claims)).toBe(claims.answers);
  });

  it('returns the list of another claim itself too', () => {
    const claims = { iss: 'x', released_values: answers };
    expect(findReleasedAnswerList(claims)).toBe(answers);
    expect(findReleasedAnswerList(claims, 'released_values')).toBe(answers);
  });

  it('returns a copy without the own __proto__ key of an answer parsed from JSON, as zod does', () => {
    const claims = JSON.parse(
      '{"answers":[{"name":"company_name","subject_type":"business","subject":"biz-1","value":"Acme",' +
        '"__proto__":{"polluted":true}}]}',
    ) as Record<string, unknown>;
    const raw = (claims['answers'] as object[])[0]!;
    expect(Object.hasOwn(raw, '__proto__')).toBe(true);

    const found = findReleasedAnswerList(claims);
    expect(found).not.toBe(claims['answers']);
    expect(found).toEqual([{ name: 'company_name', subject_type: 'business', subject: 'biz-1', value: 'Acme' }]);
    expect(Object.hasOwn(found![0]!, '__proto__')).toBe(false);
    expect(Object.getPrototypeOf(found![0])).toBe(Object.prototype);
    expect(answersFromClaims(claims).get('biz-1', 'company_name')?.value).toBe('Acme');
  });
});
