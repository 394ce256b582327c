import { describe, expect, it } from 'vitest';
import { answersFromClaims, findReleasedAnswerList } from './answers-from-claims.js';
import { ReleasedAnswers } from './released-answers.js';

const directors = [
  { name: 'director_full_name', subject_type: 'director', subject: 'subj-1', value: 'Ada Lovelace' },
  { name: 'director_full_name', subject_type: 'director', subject: 'subj-2', value: 'Charles Babbage' },
  { name: 'registered_country', subject_type: 'business', subject: 'biz-1', value: 'GB' },
];

describe('released answers, keyed by subject and name (spec 2.6)', () => {
  const answers = new ReleasedAnswers(directors);

  it('keeps both answers of a field answered by two directors (keyed by subject and name)', () => {
    expect(answers.size).toBe(3);
    expect(answers.byName('director_full_name').map((answer) => answer.value)).toEqual([
      'Ada Lovelace',
      'Charles Babbage',
    ]);
  });

  it.each<[string, string, string | undefined]>([
    ['subj-1', 'director_full_name', 'Ada Lovelace'],
    ['subj-2', 'director_full_name', 'Charles Babbage'],
    ['biz-1', 'registered_country', 'GB'],
    ['subj-3', 'director_full_name', undefined],
    ['subj-1', 'registered_country', undefined],
  ])('get(%s, %s) is %s', (subject, name, value) => {
    expect(answers.get(subject, name)?.value).toBe(value);
  });

  it('lists the subjects in the order they first answered', () => {
    expect(answers.subjects()).toEqual(['subj-1', 'subj-2', 'biz-1']);
  });

  it.each<[string, number[]]>([
    ['biz-1', [2]],
    ['subj-2', [1]],
    ['nobody', []],
  ])("bySubject(%s) gives that subject's answers only", (subject, indexes) => {
    expect(answers.bySubject(subject)).toEqual(indexes.map((index) => directors[index]));
  });

  it('iterates and serialises every answer in the order received', () => {
    expect([...answers]).toEqual(directors);
    expect(JSON.parse(JSON.stringify(answers))).toEqual(directors);
  });

  it('keeps every answer of a subject that answered several fields', () => {
    const business = [
      { name: 'company_name', subject_type: 'business', subject: 'biz-1', value: 'Acme' },
      { name: 'registered_country', subject_type: 'business', subject: 'biz-1', value: 'GB' },
      { name: 'director_full_name', subject_type: 'director', subject: 'subj-1', value: 'Ada Lovelace' },
      { name: 'director_birth_year', subject_type: 'director', subject: 'subj-1', value: 1815 },
    ];
    const several = new ReleasedAnswers(business);
    expect(several.get('biz-1', 'company_name')?.value).toBe('Acme');
    expect(several.get('biz-1', 'registered_country')?.value).toBe('GB');
    expect(several.get('subj-1', 'director_full_name')?.value).toBe('Ada Lovelace');
    expect(several.bySubject('biz-1')).toEqual(business.slice(0, 2));
    expect(several.bySubject('subj-1')).toEqual(business.slice(2));
    expect(several.subjects()).toEqual(['biz-1', 'subj-1']);
  });

  it('is not changed by a later change to the list it was built from', () => {
    const list = [...directors];
    const built = new ReleasedAnswers(list);
    list.pop();
    expect(built.size).toBe(3);
  });
});

describe('finding the answers among the claims (the claim name is not shown, spec 2.8)', () => {
  it.each<[string, Record<string, unknown>, number]>([
    ['the answers claim', { answers: directors }, 3],
    ['another claim holding a list of answers', { iss: 'x', released: directors }, 3],
    ['the answers claim before another list of answers', { released: directors.slice(0, 1), answers: directors }, 3],
    ['no list of answers', { iss: 'x', other: [1, 2] }, 0],
    ['an empty list only', { iss: 'x', other: [] }, 0],
    ['a list with one entry that is not an answer', { released: [...directors, { name: 'x' }] }, 0],
    ['a list of answers after a list of something else', { iss: 'x', other: [1, 2], released: directors }, 3],
    ['a list of answers after an empty list', { empty: [], released: directors }, 3],
  ])('answersFromClaims finds %s', (_case, claims, size) => {
    expect(answersFromClaims(claims).size).toBe(size);
  });

  it('says undefined, not an empty list, when the claims carry no released payload', () => {
    expect(findReleasedAnswerList({ iss: 'x', seq: 1 })).toBeUndefined();
  });

  it('takes an empty answers claim as an empty released payload', () => {
    expect(findReleasedAnswerList({ answers: [] })).toEqual([]);
  });

  it.each<[string, Record<string, unknown>, number | undefined]>([
    ['the named claim, over an answers claim', { answers: directors.slice(0, 1), released_values: directors }, 3],
    ['nothing when the named claim is absent, whatever other claims hold', { answers: directors }, undefined],
    ['nothing when the named claim is not a list of answers', { released_values: [{ name: 'x' }] }, undefined],
    [
      'nothing from an inherited property of that name',
      Object.create({ released_values: directors }) as Record<string, unknown>,
      undefined,
    ],
  ])('with answersClaim, reads %s', (_case, claims, size) => {
    expect(findReleasedAnswerList(claims, 'released_values')?.length).toBe(size);
  });
});
