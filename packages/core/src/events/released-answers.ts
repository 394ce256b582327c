import type { ReleasedAnswer } from './events.js';
import { DEFER, REJECT } from './schema-plan.js';
import { answerListVerdict } from './schema-plans.generated.js';

/**
 * The released answers of a data request, keyed by subject and name together (spec 2.6): a director-level field
 * answered by two people is two answers with the same name and different subjects, and keying on name alone would
 * lose one of them. This type offers no lookup by name alone that returns a single value.
 *
 * @example
 * ```ts
 * receiver.on('kyb.data_request.released', async (event, { answers }) => {
 *   for (const answer of answers.byName('director_name')) await saveDirector(answer.subject, answer.value)
 *   const name = answers.get(businessAddress, 'company_name')?.value
 * })
 * ```
 */
export class ReleasedAnswers implements Iterable<ReleasedAnswer> {
  readonly #all: ReleasedAnswer[];
  /** Built by the first lookup by subject: a release carries dozens of answers, and many handlers look none up. */
  #bySubject: Map<string, Map<string, ReleasedAnswer>> | undefined;

  constructor(answers: readonly ReleasedAnswer[]) {
    this.#all = [...answers];
  }

  /** The answer of `subject` for field `name`. */
  get(subject: string, name: string): ReleasedAnswer | undefined {
    return this.#index().get(subject)?.get(name);
  }

  /** Every answer to field `name`, one per subject. */
  byName(name: string): ReleasedAnswer[] {
    return this.#all.filter((answer) => answer.name === name);
  }

  /** Every answer `subject` gave. */
  bySubject(subject: string): ReleasedAnswer[] {
    return [...(this.#index().get(subject)?.values() ?? [])];
  }

  /** The subjects that answered. */
  subjects(): string[] {
    return [...this.#index().keys()];
  }

  get size(): number {
    return this.#all.length;
  }

  [Symbol.iterator](): Iterator<ReleasedAnswer> {
    return this.#all[Symbol.iterator]();
  }

  toJSON(): ReleasedAnswer[] {
    return [...this.#all];
  }

  #index(): Map<string, Map<string, ReleasedAnswer>> {
    if (this.#bySubject) return this.#bySubject;
    const bySubject = new Map<string, Map<string, ReleasedAnswer>>();
    for (const answer of this.#all) {
      let names = bySubject.get(answer.subject);
      if (!names) bySubject.set(answer.subject, (names = new Map()));
      names.set(answer.name, answer);
    }
    return (this.#bySubject = bySubject);
  }
}

/** A claim that holds a list zod accepts as answers, and whether zod would hand back a copy rather than the list. */
export interface LocatedAnswerList {
  list: unknown;
  /** The plan could not accept the list as it is (DEFER): only zod's copy may be used. */
  needsCopy: boolean;
}

/**
 * Where the released answers are among verified attestation claims, by the answer list's schema plan (no zod). The
 * spec does not show the claim that carries them (2.8): with `answersClaim` (the receiver's and client's
 * `attestation.answersClaim` option) only that claim is read; without it, `answers` (the service's current tokens)
 * when it is a list of answer entries (name, subject_type, subject, value), and otherwise the first other top-level
 * claim that is a non-empty such list. Undefined when the claims carry no released payload.
 *
 * @example
 * ```ts
 * locateReleasedAnswerList({ answers: [{ name: 'company_name', subject_type: 'business', subject: '0x9b2e…', value: 'Acme' }] })
 * // { list: [ … ], needsCopy: false }
 * ```
 */
export function locateReleasedAnswerList(
  claims: Record<string, unknown>,
  answersClaim?: string,
): LocatedAnswerList | undefined {
  if (answersClaim !== undefined)
    return Object.hasOwn(claims, answersClaim) ? located(claims[answersClaim]) : undefined;
  const preferred = located(claims['answers']);
  if (preferred) return preferred;
  for (const value of Object.values(claims)) {
    if (!Array.isArray(value) || value.length === 0) continue;
    const found = located(value);
    if (found) return found;
  }
  return undefined;
}

function located(list: unknown): LocatedAnswerList | undefined {
  const verdict = answerListVerdict(list);
  return verdict === REJECT ? undefined : { list, needsCopy: verdict === DEFER };
}

/**
 * Where {@link locateReleasedAnswerList} looked, for a message that says how to change it.
 *
 * @example
 * ```ts
 * `a release whose attestation carries no released answers (${describeAnswersSearch(undefined)})`
 * ```
 */
export function describeAnswersSearch(answersClaim: string | undefined): string {
  return answersClaim === undefined
    ? 'looked for a list of answers in the claim "answers", then in any claim; if the service names that claim otherwise, set attestation.answersClaim'
    : `looked for a list of answers in the claim ${JSON.stringify(answersClaim)}, as attestation.answersClaim says; check that option`;
}
