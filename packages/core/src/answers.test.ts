import { describe, expect, it } from 'vitest';
import { answersFromClaims, ReleasedAnswers } from './answers.js';

const directors = [
  { name: 'director_full_name', subject_type: 'director', subject: 'subj-1', value: 'Ada Lovelace' },
  { name: 'director_full_name', subject_type: 'director', subject: 'subj-2', value: 'Charles Babbage' },
  { name: 'registered_country', subject_type: 'business', subject: 'biz-1', value: 'GB' },
];

describe('released answers', () => {
  it('keeps both answers of a field answered by two directors (keyed by subject and name)', () => {
    const answers = new ReleasedAnswers(directors);
    expect(answers.size).toBe(3);
    expect(answers.byName('director_full_name').map((answer) => answer.value)).toEqual(['Ada Lovelace', 'Charles Babbage']);
    expect(answers.get('subj-1', 'director_full_name')?.value).toBe('Ada Lovelace');
    expect(answers.get('subj-2', 'director_full_name')?.value).toBe('Charles Babbage');
    expect(answers.get('subj-3', 'director_full_name')).toBeUndefined();
    expect(answers.subjects()).toEqual(['subj-1', 'subj-2', 'biz-1']);
    expect(answers.bySubject('biz-1')).toEqual([directors[2]]);
    expect(JSON.parse(JSON.stringify(answers))).toEqual(directors);
  });

  it('finds the answers claim by name, or by shape when the claim has another name', () => {
    expect(answersFromClaims({ answers: directors }).size).toBe(3);
    expect(answersFromClaims({ iss: 'x', released: directors }).size).toBe(3);
    expect(answersFromClaims({ iss: 'x', other: [1, 2] }).size).toBe(0);
  });
});
