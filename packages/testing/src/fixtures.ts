import { DATA_REQUEST_REFUSAL_REASONS, type TestEventType } from './event-types.js';
import { ulid } from './ulid.js';
import { randomHex } from './random.js';

/**
 * A webhook envelope as the service sends it (spec 2.3). `data` is left open: tests also build envelopes the
 * receiver must reject, and the service adds fields without notice.
 *
 * @example
 * ```ts
 * const envelope: TestEnvelope<'kyb.data_request.refused'> = testEvents.dataRequestRefused()
 * ```
 */
export interface TestEnvelope<T extends string = string> {
  event: T;
  event_id: string;
  stream_id: string;
  seq: number;
  timestamp: number;
  api_version: string;
  data: Record<string, unknown>;
  attestation?: string;
}

/**
 * What a fixture factory lets a test change. `data` is merged over the defaults one level deep, so
 * `{ data: { price: undefined } }` drops the price (it is not serialized) and everything else stays realistic.
 *
 * @example
 * ```ts
 * testEvents.dataRequestPendingApproval({ seq: 3, data: { offer_id: 'offer_42' } })
 * ```
 */
export type EnvelopeOverrides = Partial<Omit<TestEnvelope, 'event' | 'data'>> & { data?: Record<string, unknown> };

/**
 * One released answer (spec 2.6), as carried inside the attestation of a release.
 *
 * @example
 * ```ts
 * const answer: ReleasedAnswerEntry = { name: 'director_name', subject_type: 'director', subject: '0xab…', value: 'Jane Doe' }
 * ```
 */
export interface ReleasedAnswerEntry {
  name: string;
  subject_type: string;
  subject: string;
  value: unknown;
}

/**
 * The api_version every fixture carries unless overridden.
 *
 * @example
 * ```ts
 * expect(receivedEvent.api_version).toBe(TEST_API_VERSION)
 * ```
 */
export const TEST_API_VERSION = '2026-01-01';

/**
 * Identifiers the default fixtures use, so tests can assert on them without copying literals.
 *
 * @example
 * ```ts
 * expect(answers.filter((a) => a.subject === TEST_SUBJECTS.secondDirector)).toHaveLength(2)
 * ```
 */
export const TEST_SUBJECTS = {
  business: '0x6f1e0b52d3a94c7e8b2f4a1d9c0e7b3a5d8f2c41',
  newBusinessWallet: '0x3c9d7a1e5b2f48c6a0d4e9b7f1c3a5e8d2b6f094',
  firstDirector: '0x9b2e4d6f8a1c3e5b7d9f0a2c4e6b8d0f1a3c5e71',
  secondDirector: '0x1d3f5b7e9a0c2e4f6b8d0a1c3e5f7b9d2a4c6e83',
} as const;

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The answers a default release carries inside its attestation: business fields plus two directors answering the
 * same field names, because keying answers on name alone (instead of subject and name) loses one of them (spec 2.6).
 * Returns a fresh array each call so a test may change it freely.
 *
 * @example
 * ```ts
 * const answers = defaultReleasedAnswers()
 * new Set(answers.map((a) => a.name)).size < answers.length // true: names repeat across subjects
 * ```
 */
export function defaultReleasedAnswers(): ReleasedAnswerEntry[] {
  return [
    { name: 'company_name', subject_type: 'business', subject: TEST_SUBJECTS.business, value: 'Acme Widgets GmbH' },
    { name: 'registration_number', subject_type: 'business', subject: TEST_SUBJECTS.business, value: 'HRB 123456 B' },
    { name: 'director_name', subject_type: 'director', subject: TEST_SUBJECTS.firstDirector, value: 'Jane Doe' },
    { name: 'director_name', subject_type: 'director', subject: TEST_SUBJECTS.secondDirector, value: 'Rahul Mehta' },
    {
      name: 'director_date_of_birth',
      subject_type: 'director',
      subject: TEST_SUBJECTS.firstDirector,
      value: '1980-04-12',
    },
    {
      name: 'director_date_of_birth',
      subject_type: 'director',
      subject: TEST_SUBJECTS.secondDirector,
      value: '1975-11-03',
    },
  ];
}

// Billed per field, not per answer: two directors answering director_name are one billed field.
const RELEASED_LINES = [
  { field: 'company_name', tier: 'basic', cents: 150 },
  { field: 'registration_number', tier: 'basic', cents: 150 },
  { field: 'director_name', tier: 'pii', cents: 400 },
  { field: 'director_date_of_birth', tier: 'pii', cents: 400 },
];
// The quote reserves one more field than the default release delivers, so price and charge differ like they do
// when a member withholds a field.
const QUOTED_LINES = [...RELEASED_LINES, { field: 'ubo_register_extract', tier: 'premium', cents: 900 }];

function sumCents(lines: readonly { cents: number }[]): number {
  return lines.reduce((total, line) => total + line.cents, 0);
}

/**
 * What a release of `answers` bills (spec 2.5: only released fields, one line per field however many subjects
 * answered it), priced like the default quote (a field it does not list as a basic one), and never more than the
 * `quotedCents` reserved: past it the charge is the reservation, without lines. `pii_included` follows the tiers.
 * The local service's releases carry it, so their data matches what they release.
 */
export function releaseChargeFor(
  answers: readonly ReleasedAnswerEntry[],
  quotedCents: number,
): { charge: Record<string, unknown>; pii_included: boolean } {
  const quoted = new Map(QUOTED_LINES.map((line) => [line.field, line]));
  const lines = [...new Set(answers.map((answer) => answer.name))].map((field) => ({
    field,
    tier: quoted.get(field)?.tier ?? 'basic',
    cents: quoted.get(field)?.cents ?? 150,
  }));
  const total = sumCents(lines);
  const pii_included = lines.some((line) => line.tier === 'pii');
  if (total > quotedCents) return { charge: { charged_cents: quotedCents, currency: 'EUR', lines: [] }, pii_included };
  return { charge: { charged_cents: total, currency: 'EUR', lines }, pii_included };
}

/** An ISO time `msFrom` after `fromMs` (the event's own time, so a pinned clock gives consistent dates). */
function isoIn(fromMs: number, msFrom: number): string {
  return new Date(fromMs + msFrom).toISOString();
}

type DataDefaults = (streamId: string, nowMs: number) => Record<string, unknown>;

interface FactoryDefinition {
  streamPrefix: string;
  data: DataDefaults;
}

const DEFINITIONS: Record<TestEventType, FactoryDefinition> = {
  'kyb.data_request.pending_approval': {
    streamPrefix: 'dr_',
    data: (streamId, nowMs) => ({
      request_id: streamId,
      expires_at: isoIn(nowMs, 7 * DAY_MS),
      price: {
        quoted_cents: sumCents(QUOTED_LINES),
        currency: 'EUR',
        lines: QUOTED_LINES.map((line) => ({ ...line })),
      },
    }),
  },
  'kyb.data_request.released': {
    streamPrefix: 'dr_',
    data: (streamId, nowMs) => ({
      request_id: streamId,
      released_at: isoIn(nowMs, 0),
      field_count: RELEASED_LINES.length,
      pii_included: true,
      // A placeholder: the signer puts its token's kid and exp here when it attests the event (a value a test
      // passes is kept as given).
      attestation_kid: PLACEHOLDER_ATTESTATION_KID,
      attestation_expires_at: isoIn(nowMs, 10 * 60 * 1000),
      charge: {
        charged_cents: sumCents(RELEASED_LINES),
        currency: 'EUR',
        lines: RELEASED_LINES.map((line) => ({ ...line })),
      },
      // No approval block (spec 2.7): §6 says released data holds only the fields above, and where the block
      // travels is not shown. Tests that need it pass it through `data`.
    }),
  },
  'kyb.data_request.refused': {
    streamPrefix: 'dr_',
    data: (streamId) => ({ request_id: streamId, reason: 'declined' }),
  },
  'kyb.signature_request.pending_approval': {
    streamPrefix: 'sr_',
    data: (streamId, nowMs) => ({
      request_id: streamId,
      digest: `0x${randomHex(32)}`,
      message_kind: 'eip191',
      created_at: isoIn(nowMs, 0),
      expires_at: isoIn(nowMs, 2 * DAY_MS),
    }),
  },
  'kyb.signature_request.signed': {
    streamPrefix: 'sr_',
    data: (streamId, nowMs) => ({
      request_id: streamId,
      signature: `0x${randomHex(65)}`,
      digest: `0x${randomHex(32)}`,
      signed_at: isoIn(nowMs, 0),
      // Contents of verification{} are not shown by the spec (2.8).
      verification: {},
    }),
  },
  'kyb.signature_request.refused': {
    streamPrefix: 'sr_',
    data: (streamId) => ({ request_id: streamId, reason: 'declined', digest: `0x${randomHex(32)}` }),
  },
  'kyb.business.wallet_address_changed': {
    streamPrefix: 'biz_',
    data: () => ({ previous_wallet_address: TEST_SUBJECTS.business, wallet_address: TEST_SUBJECTS.newBusinessWallet }),
  },
};

/**
 * A complete, realistic envelope of any event type of spec §6, with a fresh ULID event_id and, unless given, a
 * fresh stream_id. Useful for loops over every type; {@link testEvents} has one named factory per type.
 *
 * @example
 * ```ts
 * const envelope = createTestEvent('kyb.signature_request.signed', { seq: 1 })
 * ```
 */
export function createTestEvent<T extends TestEventType>(type: T, overrides: EnvelopeOverrides = {}): TestEnvelope<T> {
  const definition = DEFINITIONS[type];
  const { data: dataOverrides, ...envelopeOverrides } = overrides;
  const streamId = overrides.stream_id ?? `${definition.streamPrefix}${ulid().toLowerCase()}`;
  // The data's times (expires_at, released_at …) follow the event's own timestamp when one is given.
  const nowMs = typeof overrides.timestamp === 'number' ? overrides.timestamp * 1000 : Date.now();
  return {
    event: type,
    event_id: ulid(),
    stream_id: streamId,
    seq: 0,
    timestamp: Math.floor(nowMs / 1000),
    api_version: TEST_API_VERSION,
    ...envelopeOverrides,
    data: { ...definition.data(streamId, nowMs), ...dataOverrides },
  };
}

/**
 * The `attestation_kid` of a released fixture until a signer attests it: the signer then writes its token's kid and
 * expiry into `attestation_kid` and `attestation_expires_at`, as the service's own deliveries carry them.
 */
export const PLACEHOLDER_ATTESTATION_KID = 'kyb-test-key';

/**
 * One factory per event type of spec §6, each returning a full envelope that passes the core's schemas.
 *
 * @example
 * ```ts
 * const released = testEvents.dataRequestReleased({ stream_id: 'dr_42', seq: 1 })
 * const { headers, body } = await signer.sign(released) // attested automatically
 * ```
 */
export const testEvents = {
  dataRequestPendingApproval: (overrides?: EnvelopeOverrides) =>
    createTestEvent('kyb.data_request.pending_approval', overrides),
  dataRequestReleased: (overrides?: EnvelopeOverrides) => createTestEvent('kyb.data_request.released', overrides),
  dataRequestRefused: (overrides?: EnvelopeOverrides) => createTestEvent('kyb.data_request.refused', overrides),
  signatureRequestPendingApproval: (overrides?: EnvelopeOverrides) =>
    createTestEvent('kyb.signature_request.pending_approval', overrides),
  signatureRequestSigned: (overrides?: EnvelopeOverrides) => createTestEvent('kyb.signature_request.signed', overrides),
  signatureRequestRefused: (overrides?: EnvelopeOverrides) =>
    createTestEvent('kyb.signature_request.refused', overrides),
  businessWalletAddressChanged: (overrides?: EnvelopeOverrides) =>
    createTestEvent('kyb.business.wallet_address_changed', overrides),
} as const;

/**
 * One `kyb.data_request.refused` envelope per refusal reason of spec §3, each on its own stream.
 *
 * @example
 * ```ts
 * for (const envelope of refusedForEveryReason()) expect((await deliver(envelope)).status).toBe(200)
 * ```
 */
export function refusedForEveryReason(overrides: EnvelopeOverrides = {}): TestEnvelope<'kyb.data_request.refused'>[] {
  return DATA_REQUEST_REFUSAL_REASONS.map((reason) =>
    createTestEvent('kyb.data_request.refused', { ...overrides, data: { ...overrides.data, reason } }),
  );
}

/**
 * Events of one stream with seq 0..n-1 sharing one stream_id, for ordering tests. Give a count for that many
 * data-request `pending_approval` events (unattested, so no keys are involved), or a list of types, e.g. the
 * natural life of a data request.
 *
 * @example
 * ```ts
 * const [pending, released] = testStream(['kyb.data_request.pending_approval', 'kyb.data_request.released'])
 * const five = testStream(5, { stream_id: 'dr_order_test' })
 * ```
 */
export function testStream(
  countOrTypes: number | readonly TestEventType[],
  overrides: Omit<EnvelopeOverrides, 'seq'> = {},
): TestEnvelope<TestEventType>[] {
  const types: readonly TestEventType[] =
    typeof countOrTypes === 'number'
      ? Array.from({ length: countOrTypes }, () => 'kyb.data_request.pending_approval' as const)
      : countOrTypes;
  const streamId = overrides.stream_id ?? `dr_${ulid().toLowerCase()}`;
  return types.map((type, seq) => createTestEvent(type, { ...overrides, stream_id: streamId, seq }));
}
