/**
 * Property-based fuzzing of the receiver with fast-check (issue 11 "Proof"), part of the normal test command.
 *
 * Eight families of generated deliveries (signature headers, body mutations, hostile signed bodies, JWT headers,
 * claims, encodings, header containers, and misbehaving store answers), about 116k cases per run in all, each run through two receivers of one
 * mode (HMAC + attestation, attestation only, HMAC only): one on node:crypto and one on Web Crypto. Invariants on
 * every delivery (harness.ts): `receive()` never throws; no 5xx but the retryable codes; handlers only for a 2xx,
 * and then exactly the ones the type selects; a 2xx is accepted by the independent reference check of
 * reference.ts (never the core's own code), except the attestation-only `unauthenticated` acknowledgement, which
 * must run no verified handler and write nothing to the store; both crypto paths give the same status and code;
 * no log entry carries a secret or a token, or is huge. A delivery acknowledged as processed is delivered again and
 * must be answered `duplicate`; a genuine event delivered after a forgery or a relabelling that reused its ids must
 * get the answer it gets alone.
 *
 * Environment:
 * - `KYB_FUZZ_SEED=<integer>`: the seed of every property (a failure prints the seed it ran with). Default: random.
 * - `KYB_FUZZ_PATH=<path>`: with the seed and `-t '<property name>'`, replay just the shrunk counterexample.
 * - `KYB_FUZZ_RUNS=<count>` spreads that many cases over the families in the default proportions;
 *   `KYB_FUZZ_RUNS=<factor>x` (e.g. `0.1x`, `3x`) scales the defaults.
 *
 * @example
 * ```sh
 * KYB_FUZZ_SEED=1234 KYB_FUZZ_RUNS=0.1x npx vitest run packages/core/fuzz/receiver.fuzz.test.ts
 * ```
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  borrowedEntry,
  buildBodyMutationCase,
  buildClaimsCase,
  buildContainerCase,
  buildEncodingCase,
  buildHostileCase,
  buildJwtHeaderCase,
  buildSignatureCase,
  buildStoreCase,
  bodyMutationCaseArb,
  claimsCaseArb,
  containerCaseArb,
  encodingCaseArb,
  hostileCaseArb,
  jwtHeaderCaseArb,
  signatureCaseArb,
  storeCaseArb,
  type BuiltDelivery,
} from './arbitraries.js';
import {
  checkInvariants,
  createModeLanes,
  deliverBoth,
  resetStores,
  VALID_CLAIM_SCRIPTS,
  type Mode,
  type ModeLanes,
  type Outcome,
} from './harness.js';
import { isKnownEventType } from '../src/events/event-types.js';
import { referenceTypProblem, type Verdict } from './reference.js';
import { createFuzzWorld, type FuzzWorld, type PoolEntry } from './world.js';

/** Default cases per family; about 116k in all. */
const PLAN = {
  'signature headers': 18_000,
  'body mutations': 18_000,
  'hostile signed bodies': 16_000,
  'JWT headers': 14_000,
  claims: 16_000,
  encodings: 14_000,
  'header containers': 14_000,
  'store answers': 6_000,
} as const;
type Family = keyof typeof PLAN;

function planned(family: Family): number {
  const setting = process.env['KYB_FUZZ_RUNS']?.trim();
  const base = PLAN[family];
  if (!setting) return base;
  const factor = /^(\d+(?:\.\d+)?)x$/i.exec(setting);
  if (factor) return Math.max(1, Math.round(base * Number(factor[1])));
  if (/^\d+$/.test(setting)) {
    const total = Object.values(PLAN).reduce((sum, runs) => sum + runs, 0);
    return Math.max(1, Math.round((Number(setting) * base) / total));
  }
  throw new Error(`KYB_FUZZ_RUNS="${setting}" is neither a count (e.g. 5000) nor a factor (e.g. 0.5x).`);
}

const SEED = process.env['KYB_FUZZ_SEED']
  ? Number(process.env['KYB_FUZZ_SEED'])
  : Math.floor(Math.random() * 0x7fffffff);
if (!Number.isSafeInteger(SEED)) throw new Error('KYB_FUZZ_SEED must be an integer, as printed by a failing run.');
const PATH = process.env['KYB_FUZZ_PATH'];

let world: FuzzWorld;
let modes: Record<Mode, ModeLanes>;
const secrets = { strings: [] as string[] };
const stats = new Map<
  Family,
  { cases: number; deliveries: number; acknowledged: number; codes: Map<string, number> }
>();
const startedAt = performance.now();

beforeAll(async () => {
  world = await createFuzzWorld();
  modes = createModeLanes(world);
  secrets.strings = Object.values(world.secretValues);
});

afterAll(() => {
  const seconds = ((performance.now() - startedAt) / 1000).toFixed(1);
  const total = [...stats.values()].reduce((sum, family) => sum + family.cases, 0);
  const lines = [...stats].map(([family, s]) => {
    const top = [...s.codes]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 4)
      .map(([code, n]) => `${code} ${n}`)
      .join(', ');
    return `  ${family}: ${s.cases} cases, ${s.deliveries} deliveries, ${s.acknowledged} acknowledged (${top})`;
  });
  console.log(`fuzz: ${total} cases in ${seconds} s, seed ${SEED}\n${lines.join('\n')}`);
});

function record(family: Family, outcomes: readonly Outcome[]): void {
  const s = stats.get(family)!;
  s.deliveries++;
  const result = outcomes[0]!.result!;
  if (result.status >= 200 && result.status < 300) s.acknowledged++;
  const code = result.code ?? String(result.status);
  s.codes.set(code, (s.codes.get(code) ?? 0) + 1);
}

function assertNoPrototypePollution(): void {
  const probe = {} as Record<string, unknown>;
  if (probe['polluted'] !== undefined || Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted')) {
    delete (Object.prototype as Record<string, unknown>)['polluted'];
    throw new Error('Object.prototype was polluted by a delivery');
  }
}

/** One delivery through both receivers of the mode, with every invariant checked; a first acknowledgement is then redelivered. */
async function deliver(
  family: Family,
  mode: Mode,
  delivery: BuiltDelivery,
  redeliver = true,
): Promise<{ outcomes: [Outcome, Outcome]; verdict: Verdict }> {
  const lanes = modes[mode];
  const outcomes = await deliverBoth(lanes, delivery);
  record(family, outcomes);
  const verdict = checkInvariants(lanes, delivery, outcomes, secrets, world.tokenSignatures);
  assertNoPrototypePollution();
  const first = outcomes[0].result!;
  if (redeliver && first.status === 200 && first.code === undefined) {
    const again = await deliverBoth(lanes, delivery);
    record(family, again);
    checkInvariants(lanes, delivery, again, secrets, world.tokenSignatures);
    for (const outcome of again) {
      if (outcome.result!.code !== 'duplicate') {
        throw new Error(
          `[${mode}, ${outcome.path}] a redelivery of a processed event got ${outcome.result!.status} ${outcome.result!.code ?? ''}, not duplicate`,
        );
      }
    }
  }
  return { outcomes, verdict };
}

/** Runs one family: a fresh store per case, every case counted. */
async function runFamily<T extends { mode: Mode }>(
  family: Family,
  arbitrary: fc.Arbitrary<T>,
  check: (c: T) => Promise<void>,
): Promise<void> {
  stats.set(family, { cases: 0, deliveries: 0, acknowledged: 0, codes: new Map() });
  const s = stats.get(family)!;
  const runs = planned(family);
  await fc.assert(
    fc.asyncProperty(arbitrary, async (c) => {
      s.cases++;
      resetStores(modes[c.mode]);
      await check(c);
    }),
    { numRuns: runs, seed: SEED, ...(PATH ? { path: PATH } : {}) },
  );
  // A generator that never produced an acceptable delivery (or never a rejected one) would prove nothing.
  if (runs >= 500 && !PATH) {
    expect(s.acknowledged, `${family}: some generated deliveries are acknowledged`).toBeGreaterThan(0);
    expect(s.deliveries - s.acknowledged, `${family}: some generated deliveries are rejected`).toBeGreaterThan(0);
  }
}

function genuine(entry: PoolEntry): BuiltDelivery {
  return { headers: world.genuineHeaders(entry.body, entry.envelope.event_id), body: entry.body };
}

function summary(outcome: Outcome): string {
  const kinds = outcome.calls
    .map((call) => call.kind)
    .sort()
    .join('+');
  return `${outcome.result!.status} ${outcome.result!.code ?? '-'} [${kinds}]`;
}

const TIMEOUT = 600_000;

describe('receiver fuzzing (fast-check, both crypto paths, three modes)', () => {
  it(
    'signature headers: grammar, t, v1, kv, spacing, duplicates, case',
    async () => {
      await runFamily('signature headers', signatureCaseArb(world), async (c) => {
        await deliver('signature headers', c.mode, buildSignatureCase(world, c));
      });
    },
    TIMEOUT,
  );

  it(
    'body mutations of validly signed bodies: bit flips, truncation, insertion, UTF-8 edge cases, BOM, huge numbers, nesting, duplicate keys',
    async () => {
      await runFamily('body mutations', bodyMutationCaseArb(world), async (c) => {
        await deliver('body mutations', c.mode, buildBodyMutationCase(world, c));
      });
    },
    TIMEOUT,
  );

  it(
    'hostile signed bodies: wrong types, long strings, control characters, look-alike types, prototype keys, borrowed ids and attestations',
    async () => {
      await runFamily('hostile signed bodies', hostileCaseArb(world), async (c) => {
        const borrowed = borrowedEntry(world, c);
        if (!borrowed || c.mode === 'hmac-only') {
          await deliver('hostile signed bodies', c.mode, buildHostileCase(world, c));
          return;
        }
        // The genuine event alone, then (fresh store) the hostile delivery that reuses its ids, then the genuine event.
        const lanes = modes[c.mode];
        const alone = await deliver('hostile signed bodies', c.mode, genuine(borrowed), false);
        resetStores(lanes);
        const hostile = buildHostileCase(world, c);
        const { outcomes, verdict } = await deliver('hostile signed bodies', c.mode, hostile, false);
        const after = await deliver('hostile signed bodies', c.mode, genuine(borrowed), false);
        const result = outcomes[0].result!;
        const accepted = result.status >= 200 && result.status < 300 && result.code !== 'unauthenticated';
        const rewrapped =
          verdict.ok &&
          typeof verdict.envelope['attestation'] === 'string' &&
          verdict.envelope['event'] !== borrowed.envelope.event;
        // Only a delivery that legitimately was this event may make the genuine one a duplicate (issue 11 §1–2). One
        // exception, by design (dedupeKeyOf): every unknown type of one event shares a key, so a re-wrap from an unknown
        // type to another unknown type, arriving first, makes the genuine one a duplicate, and nothing worse.
        const unknownToUnknown =
          rewrapped &&
          !isKnownEventType(borrowed.envelope.event) &&
          !isKnownEventType(String(verdict.envelope['event']));
        if (!accepted || rewrapped) {
          for (const i of [0, 1] as const) {
            const got = summary(after.outcomes[i]);
            if (got !== summary(alone.outcomes[i]) && !(unknownToUnknown && got === '200 duplicate []')) {
              throw new Error(
                `[${c.mode}, ${after.outcomes[i].path}] the genuine ${borrowed.envelope.event} got ${summary(after.outcomes[i])} after a ` +
                  `${accepted ? 'relabelled' : 'rejected or unauthenticated'} delivery with its ids (${summary(outcomes[i])}); alone it gets ${summary(alone.outcomes[i])}`,
              );
            }
          }
        }
      });
    },
    TIMEOUT,
  );

  it(
    'JWT headers: typ / alg / kid / crit variants and unicode look-alikes; typ is checked first',
    async () => {
      await runFamily('JWT headers', jwtHeaderCaseArb(world), async (c) => {
        const built = buildJwtHeaderCase(world, c);
        const { outcomes } = await deliver('JWT headers', c.mode, built);
        if (c.mode === 'hmac-only') return;
        let header: unknown;
        try {
          header = JSON.parse(built.headerText);
        } catch {
          return;
        }
        // Spec 5.5.1: a token of another kind is rejected on its typ, before any key or signature work.
        if (
          typeof header === 'object' &&
          header !== null &&
          !Array.isArray(header) &&
          referenceTypProblem(header as Record<string, unknown>)
        ) {
          for (const outcome of outcomes) {
            if (outcome.result!.code !== 'attestation_invalid_typ') {
              throw new Error(
                `[${c.mode}, ${outcome.path}] a wrong typ was answered ${outcome.result!.status} ${outcome.result!.code ?? ''}, not attestation_invalid_typ`,
              );
            }
          }
        }
      });
    },
    TIMEOUT,
  );

  it(
    'claims: iss / aud / exp / iat / nbf boundaries, Infinity (1e400), strings, arrays, ids that differ from the envelope',
    async () => {
      await runFamily('claims', claimsCaseArb(world), async (c) => {
        await deliver('claims', c.mode, buildClaimsCase(world, c));
      });
    },
    TIMEOUT,
  );

  it(
    'encodings: base64 vs base64url, padding, stray characters, BOM and other text encodings in segments',
    async () => {
      await runFamily('encodings', encodingCaseArb(world), async (c) => {
        await deliver('encodings', c.mode, buildEncodingCase(world, c));
      });
    },
    TIMEOUT,
  );

  it(
    'header containers: Web Headers and Node records, mixed-case keys, arrays, duplicates, missing values',
    async () => {
      await runFamily('header containers', containerCaseArb(world), async (c) => {
        await deliver('header containers', c.mode, buildContainerCase(world, c));
      });
    },
    TIMEOUT,
  );

  it(
    'store answers: a store that answers junk, throws or rejects never lets a delivery run handlers or be acknowledged',
    async () => {
      await runFamily('store answers', storeCaseArb(world), async (c) => {
        resetStores(modes[c.mode], c.store);
        // A redelivery finds the record as the misbehaving store left it, so the duplicate check applies to a sound store only.
        const sound = c.store.claim === 'real' && c.store.complete === 'real';
        const { outcomes } = await deliver('store answers', c.mode, buildStoreCase(world, c), sound);
        if (VALID_CLAIM_SCRIPTS.has(c.store.claim)) return;
        for (const outcome of outcomes) {
          const { status, code } = outcome.result!;
          // An unauthenticated delivery never reaches the store; only its own hook may run.
          const verified = outcome.calls.filter((call) => call.kind !== 'unauthenticated').length;
          if (verified > 0 || (status >= 200 && status < 300 && code !== 'unauthenticated')) {
            throw new Error(
              `[${c.mode}, ${outcome.path}] a store claim answer "${c.store.claim}" led to ${status} ${code ?? ''} with ${verified} handler call(s); expected a retryable rejection`,
            );
          }
        }
      });
    },
    TIMEOUT,
  );
});
