import {
  createTestEvent,
  createTestSigner,
  testEvents,
  type SignOptions,
  type TestEnvelope,
} from '@kyb-webhooks/testing';
import type { DevKeys } from './dev-keys.js';
import type { DevSigner } from './dev-signer.js';

/**
 * Ordering modes of the receiver (`ordering.mode`); a scenario's expectations may depend on it.
 *
 * @example
 * ```ts
 * const mode: OrderingMode = 'enforce'
 * ```
 */
export type OrderingMode = 'off' | 'detect' | 'enforce';

/**
 * Every ordering mode: what a scenario allows before an answer narrowed it down.
 *
 * @example
 * ```ts
 * allowed(step.expect, ORDERING_MODES)
 * ```
 */
export const ORDERING_MODES: readonly OrderingMode[] = ['off', 'detect', 'enforce'];

/**
 * One answer a correct receiver may give: a status (`'2xx'` for any success) and the code it carries (`null`: none).
 *
 * @example
 * ```ts
 * const duplicate: Expectation = { status: 200, code: 'duplicate' }
 * ```
 */
export interface Expectation {
  status: number | '2xx';
  code: string | null;
  /** Only under these ordering modes; absent: under every mode. */
  modes?: readonly OrderingMode[];
}

/**
 * What a step sends: the envelope (for the table) and the exact headers and bytes.
 *
 * @example
 * ```ts
 * const outgoing: Outgoing = await signer.sign(envelope)
 * ```
 */
export interface Outgoing {
  envelope: TestEnvelope;
  headers: Record<string, string>;
  body: Uint8Array;
}

/**
 * One delivery of a scenario and the answers a correct receiver gives to it.
 *
 * @example
 * ```ts
 * const step: ScenarioStep = { label: 'forged HMAC', make: () => signer.sign(e, { secret: 'x' }), expect: [{ status: 401, code: 'signature_mismatch' }], why: '…' }
 * ```
 */
export interface ScenarioStep {
  label: string;
  /** Signed right before it is sent, so `t` is fresh. */
  make: () => Promise<Outgoing>;
  expect: readonly Expectation[];
  /** Why a correct receiver answers that: printed when the app answered otherwise. */
  why: string;
}

/**
 * What a scenario is built from.
 *
 * @example
 * ```ts
 * SCENARIOS.duplicate.steps({ signer, keys, phase: 'overlap' })
 * ```
 */
export interface ScenarioContext {
  signer: DevSigner;
  keys: DevKeys;
  phase: 'overlap' | 'after';
}

/**
 * A named scenario.
 *
 * @example
 * ```ts
 * for (const step of SCENARIOS['forged-hmac'].steps(context)) await post(await step.make())
 * ```
 */
export interface Scenario {
  description: string;
  /** True when some step carries an attestation the dev server verifies against the dev JWKS. */
  attested: boolean;
  /** True when the steps judge the receiver's HMAC checks: a receiver without secrets cannot be judged by them. */
  needsHmac: boolean;
  steps(context: ScenarioContext): ScenarioStep[];
}

const ACCEPTED: Expectation = { status: '2xx', code: null };
const DUPLICATE: Expectation = { status: 200, code: 'duplicate' };
const AHEAD_UNDER_ENFORCE: Expectation[] = [
  { status: 409, code: 'out_of_order', modes: ['enforce'] },
  { status: 503, code: 'backfill_unavailable', modes: ['enforce'] },
];

function signed(signer: DevSigner, envelope: TestEnvelope, options: SignOptions = {}): () => Promise<Outgoing> {
  return () => signer.sign(envelope, options);
}

// A release names its attestation's key in data; the dev key's kid keeps the event realistic.
function release(keys: DevKeys, overrides: Parameters<typeof testEvents.dataRequestReleased>[0] = {}): TestEnvelope {
  const envelope = testEvents.dataRequestReleased(overrides);
  envelope.data.attestation_kid = keys.kid;
  return envelope;
}

/**
 * Every scenario, by the name `scenario <name>` takes.
 *
 * @example
 * ```ts
 * Object.keys(SCENARIOS) // ['duplicate', 'out-of-order', 'gap', …]
 * ```
 */
export const SCENARIOS: Record<string, Scenario> = {
  duplicate: {
    description: 'an attested release, then the same event_id again as the service redelivers it',
    attested: true,
    needsHmac: false,
    steps: ({ signer, keys }) => {
      const carried = signer.withAttestation(release(keys));
      return [
        {
          label: 'release (attempt 1)',
          make: async () => signer.sign(await carried, { attempt: 1 }),
          expect: [ACCEPTED],
          why: 'a genuine, attested event is processed and acknowledged with a 2xx',
        },
        {
          label: 'same event_id again (attempt 2)',
          make: async () => signer.sign(await carried, { attempt: 2 }),
          expect: [DUPLICATE],
          why: 'delivery is at least once: an event_id processed before is acknowledged as "200 duplicate" and the handler does not run again',
        },
      ];
    },
  },
  'out-of-order': {
    description: 'seq 1 of a stream before seq 0, then seq 0, then seq 1 again as the service retries it',
    attested: false,
    needsHmac: true,
    steps: ({ signer }) => {
      const first = testEvents.dataRequestPendingApproval({ seq: 0 });
      const later = testEvents.dataRequestRefused({ stream_id: first.stream_id, seq: 1, data: { reason: 'declined' } });
      return [
        {
          label: 'seq 1 before seq 0',
          make: signed(signer, later),
          expect: [{ ...ACCEPTED, modes: ['off', 'detect'] }, ...AHEAD_UNDER_ENFORCE],
          why: 'with ordering off or detect each delivery stands alone (2xx); under enforce an event ahead of its stream is held (409 out_of_order, or 503 backfill_unavailable when the API cannot be reached)',
        },
        {
          label: 'seq 0',
          make: signed(signer, first),
          expect: [ACCEPTED],
          why: 'the first event of the stream is processed',
        },
        {
          label: 'seq 1 again (attempt 2)',
          make: signed(signer, later, { attempt: 2 }),
          expect: [
            { ...DUPLICATE, modes: ['off', 'detect'] },
            { ...ACCEPTED, modes: ['enforce'] },
          ],
          why: 'with ordering off or detect seq 1 was processed on its first delivery ("200 duplicate" now); under enforce it runs now that seq 0 is done (2xx)',
        },
      ];
    },
  },
  gap: {
    description: 'seq 0 of a stream, then seq 2: seq 1 never arrives (the service gave up on it)',
    attested: false,
    needsHmac: true,
    steps: ({ signer }) => {
      const first = testEvents.dataRequestPendingApproval({ seq: 0 });
      const afterGap = testEvents.dataRequestRefused({
        stream_id: first.stream_id,
        seq: 2,
        data: { reason: 'expired' },
      });
      return [
        {
          label: 'seq 0',
          make: signed(signer, first),
          expect: [ACCEPTED],
          why: 'the first event of the stream is processed',
        },
        {
          label: 'seq 2 (seq 1 missing)',
          make: signed(signer, afterGap),
          expect: [{ ...ACCEPTED, modes: ['off', 'detect'] }, ...AHEAD_UNDER_ENFORCE],
          why: 'with ordering off or detect the event is processed (detect reports the gap to onGap); under enforce the receiver must fetch seq 1 first and answers 409 out_of_order or 503 backfill_unavailable until it can',
        },
      ];
    },
  },
  'forged-hmac': {
    description: 'a delivery MACed with a guessed secret, one whose body changed after signing, then the genuine one',
    attested: false,
    needsHmac: true,
    steps: ({ signer }) => {
      const genuine = testEvents.dataRequestRefused({ data: { reason: 'threshold_not_met' } });
      return [
        {
          label: 'HMAC with a guessed secret',
          make: signed(signer, genuine, { secret: 'whsec_guessed_by_an_attacker' }),
          expect: [{ status: 401, code: 'signature_mismatch' }],
          why: 'the MAC does not match the body under the endpoint secret: 401 signature_mismatch, and nothing is processed',
        },
        {
          label: 'body changed after signing',
          make: async () => {
            const delivery = await signer.sign(genuine);
            const tampered = new TextEncoder().encode(
              new TextDecoder().decode(delivery.body).replace('"threshold_not_met"', '"declined"'),
            );
            return { ...delivery, body: tampered };
          },
          expect: [{ status: 401, code: 'signature_mismatch' }],
          why: 'the MAC covers the exact bytes: any change after signing is 401 signature_mismatch',
        },
        {
          label: 'the genuine delivery',
          make: signed(signer, genuine),
          expect: [ACCEPTED],
          why: 'rejected deliveries must not claim the event_id: the genuine event is still processed (2xx, not "duplicate")',
        },
      ];
    },
  },
  'expired-attestation': {
    description: 'a release whose attestation expired half an hour ago, then the same event with a fresh one',
    attested: true,
    needsHmac: false,
    steps: ({ signer, keys }) => {
      const envelope = release(keys);
      const nowSeconds = Math.floor(Date.now() / 1000);
      return [
        {
          label: 'attestation expired 30 min ago',
          make: signed(signer, envelope, { claims: { iat: nowSeconds - 3600, exp: nowSeconds - 1800 } }),
          expect: [{ status: 401, code: 'attestation_invalid' }],
          why: 'exp is checked with a small leeway (spec 5.5.4): an expired attestation is 401 attestation_invalid',
        },
        {
          label: 'same event, fresh attestation',
          make: signed(signer, envelope),
          expect: [ACCEPTED],
          why: 'the rejected delivery did not claim the event_id: the genuine event is processed',
        },
      ];
    },
  },
  'relabelled-attestation': {
    description:
      'a genuine release\u2019s attestation carried by envelopes with another event_id and another seq, then the genuine release',
    attested: true,
    needsHmac: false,
    steps: ({ signer, keys }) => {
      // Seq 0, the start of its own stream: a receiver that enforces order runs it at once (seq 1 would be a gap the
      // CLI cannot fill, since it serves no events API).
      const original = release(keys, { seq: 0 });
      const carried = signer.withAttestation(original);
      const relabel = (change: Partial<TestEnvelope>) => async () => {
        const { attestation } = await carried;
        return signer.sign({ ...original, ...change, attestation: attestation as string });
      };
      return [
        {
          label: 'attestation under another event_id',
          make: relabel({ event_id: testEvents.dataRequestReleased().event_id }),
          expect: [{ status: 401, code: 'attestation_relabelled' }],
          why: 'the envelope\u2019s event_id must equal the signed copy (spec 5.5.5): 401 attestation_relabelled',
        },
        {
          label: 'attestation under another seq',
          make: relabel({ seq: 2 }),
          expect: [{ status: 401, code: 'attestation_relabelled' }],
          why: 'the envelope\u2019s seq must equal the signed copy (spec 5.5.5): 401 attestation_relabelled',
        },
        {
          label: 'the genuine release',
          make: async () => signer.sign(await carried),
          expect: [ACCEPTED],
          why: 'a relabelled delivery is rejected before dedupe, so it never hides the genuine event: 2xx, not "duplicate"',
        },
      ];
    },
  },
  'secret-rotation': {
    description:
      'during the overlap (default): deliveries signed with the current and the previous secret version; with --phase after: the previous version once the overlap ended',
    attested: false,
    needsHmac: true,
    steps: ({ signer, keys, phase }) => {
      const current = keys.currentVersion;
      const previous = keys.previousVersion;
      const steps: ScenarioStep[] = [
        {
          label: `signed with the current secret (kv=${current})`,
          make: signed(signer, testEvents.dataRequestPendingApproval(), { version: current }),
          expect: [ACCEPTED],
          why: `the current version is always accepted: give the receiver KYB_SECRET_V${current}`,
        },
      ];
      if (phase === 'overlap') {
        steps.push({
          label: `signed with the previous secret (kv=${previous})`,
          make: signed(signer, testEvents.dataRequestPendingApproval(), { version: previous }),
          expect: [ACCEPTED],
          why: `during the 24-hour overlap both versions are valid (spec 5.7): keep KYB_SECRET_V${previous} until it ends`,
        });
      } else {
        steps.push({
          label: `signed with the previous secret (kv=${previous}) after the overlap`,
          make: signed(signer, testEvents.dataRequestPendingApproval(), { version: previous }),
          expect: [
            { status: 401, code: 'signature_version_expired' },
            { status: 401, code: 'signature_unknown_version' },
          ],
          why: `after the overlap the old version must be refused: give it a notAfter in the past (401 signature_version_expired) or remove KYB_SECRET_V${previous} (401 signature_unknown_version)`,
        });
      }
      return steps;
    },
  },
  'unknown-attested-type': {
    description:
      'an attested event of a type this library does not know, then one whose attestation is signed by another key',
    attested: true,
    needsHmac: false,
    steps: ({ signer, keys }) => {
      const unknown = (): TestEnvelope => {
        const base = createTestEvent('kyb.data_request.refused');
        return {
          ...base,
          event: 'kyb.business.risk_flagged',
          stream_id: `biz_${base.event_id.toLowerCase()}`,
          data: { level: 'review' },
        };
      };
      const forged = unknown();
      return [
        {
          label: 'unknown type, genuine attestation',
          make: signed(signer, unknown(), { attest: true }),
          expect: [ACCEPTED],
          why: 'new attested types appear without notice (spec 9.2): verified, given to onUnknown and acknowledged with a 2xx',
        },
        {
          label: 'unknown type, attestation by another key',
          make: async () => {
            // A key of its own, under the dev key's kid: signed correctly, but not by the key the JWKS publishes.
            const stranger = await createTestSigner({ issuer: keys.issuer, audience: keys.audience });
            return signer.sign(forged, { attestation: await stranger.attest(forged, { header: { kid: keys.kid } }) });
          },
          expect: [{ status: 401, code: 'attestation_invalid' }],
          why: 'every attested event is verified, known type or not (spec 5.6): a token that does not verify under the kid is 401 attestation_invalid',
        },
      ];
    },
  },
};

/**
 * The scenario names, in the order the README lists them.
 *
 * @example
 * ```ts
 * SCENARIO_NAMES.includes('gap') // true
 * ```
 */
export const SCENARIO_NAMES = Object.keys(SCENARIOS);

/**
 * True when `answer` is one of the expectations allowed under any of `modes` (default: every mode).
 *
 * @example
 * ```ts
 * matches({ status: 200, code: 'duplicate' }, [{ status: 200, code: 'duplicate' }]) // true
 * ```
 */
export function matches(
  answer: { status: number | null; code?: string | undefined },
  expectations: readonly Expectation[],
  modes: readonly OrderingMode[] = ORDERING_MODES,
): boolean {
  return allowed(expectations, modes).some((expectation) => answers(answer, expectation));
}

/**
 * The expectations that apply under any of `modes`.
 *
 * @example
 * ```ts
 * allowed(step.expect, ['enforce'])
 * ```
 */
export function allowed(
  expectations: readonly Expectation[],
  modes: readonly OrderingMode[] = ORDERING_MODES,
): Expectation[] {
  return expectations.filter(
    (expectation) => expectation.modes === undefined || expectation.modes.some((mode) => modes.includes(mode)),
  );
}

/**
 * The ordering modes still possible once `answer` came back: those of the expectations it matched. A receiver runs
 * one mode for the whole scenario, so a later step is judged only against that mode's answers (a receiver that
 * accepted seq 1 ahead of seq 0 is not enforcing, and must then answer its redelivery "200 duplicate"). An answer
 * that matched nothing leaves the modes as they were.
 *
 * @example
 * ```ts
 * modesAfter({ status: 409, code: 'out_of_order' }, step.expect, ORDERING_MODES) // ['enforce']
 * ```
 */
export function modesAfter(
  answer: { status: number | null; code?: string | undefined },
  expectations: readonly Expectation[],
  modes: readonly OrderingMode[],
): OrderingMode[] {
  const matched = allowed(expectations, modes).filter((expectation) => answers(answer, expectation));
  if (matched.length === 0) return [...modes];
  return modes.filter((mode) =>
    matched.some((expectation) => expectation.modes === undefined || expectation.modes.includes(mode)),
  );
}

function answers(answer: { status: number | null; code?: string | undefined }, expectation: Expectation): boolean {
  if (answer.status === null) return false;
  const statusOk =
    expectation.status === '2xx' ? answer.status >= 200 && answer.status < 300 : answer.status === expectation.status;
  return statusOk && (answer.code ?? null) === expectation.code;
}

/**
 * An expectation as the table shows it, e.g. `401 signature_mismatch` or `2xx (off, detect)`.
 *
 * @example
 * ```ts
 * describeExpectation({ status: 200, code: 'duplicate' }) // '200 duplicate'
 * ```
 */
export function describeExpectation(expectation: Expectation): string {
  const modes = expectation.modes ? ` (${expectation.modes.join('/')})` : '';
  return `${expectation.status}${expectation.code ? ` ${expectation.code}` : ''}${modes}`;
}
