/*
 * The released answers among attestation claims, for code that holds claims of its own (the client's pulled
 * releases, a merchant's script): synchronous, so it uses zod, and lives in the `./schemas` entry with the schemas.
 * The receiver finds the same answers without loading zod (released-answers.ts, lazy-validation.ts).
 */
import { releasedAnswerListSchema, type ReleasedAnswer } from './events.js';
import { locateReleasedAnswerList, ReleasedAnswers } from './released-answers.js';

/**
 * Finds the released answers among verified attestation claims. The spec does not show the claim that carries
 * them (2.8): with `answersClaim` (the receiver's and client's `attestation.answersClaim` option) only that claim is
 * read; without it, `answers` (the service's current tokens) when it is a list of answer entries (name,
 * subject_type, subject, value), and otherwise the first other top-level claim that is a non-empty such list.
 * Undefined when the claims carry no released payload.
 *
 * @example
 * ```ts
 * findReleasedAnswerList({ answers: [{ name: 'company_name', subject_type: 'business', subject: '0x9b2e…', value: 'Acme' }] })
 * findReleasedAnswerList(claims, 'released_values') // a service that names the claim otherwise
 * ```
 */
export function findReleasedAnswerList(
  claims: Record<string, unknown>,
  answersClaim?: string,
): ReleasedAnswer[] | undefined {
  const found = locateReleasedAnswerList(claims, answersClaim);
  if (!found) return undefined;
  // zod's copy only where the plan could not accept the list as it is (an own __proto__ key): a release's answers are
  // otherwise the claims' own list, not a copy (~2.3 KB of allocation per delivery).
  if (!found.needsCopy) return found.list as ReleasedAnswer[];
  const parsed = releasedAnswerListSchema.safeParse(found.list);
  return parsed.success ? parsed.data : undefined;
}

/**
 * The released answers among verified attestation claims (see {@link findReleasedAnswerList}), keyed by subject and
 * name; empty when the claims carry none.
 *
 * @example
 * ```ts
 * const answers = answersFromClaims(claims)
 * answers.get('0x9b2e…5e71', 'director_name') // the answer of that director, not of any director
 * ```
 */
export function answersFromClaims(claims: Record<string, unknown>, answersClaim?: string): ReleasedAnswers {
  return new ReleasedAnswers(findReleasedAnswerList(claims, answersClaim) ?? []);
}
