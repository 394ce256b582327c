import { describe, expect, it } from 'vitest';
import {
  ATTESTED_EVENT_TYPES,
  DATA_REQUEST_REFUSAL_REASONS as CORE_REFUSAL_REASONS,
  KNOWN_EVENT_TYPES,
} from '@kyb-webhooks/core';
import { envelopeSchema, eventDataSchemas } from '@kyb-webhooks/core/schemas';
import { ATTESTED_TEST_EVENT_TYPES, DATA_REQUEST_REFUSAL_REASONS, TEST_EVENT_TYPES } from './event-types.js';
import {
  TEST_API_VERSION,
  TEST_SUBJECTS,
  createTestEvent,
  defaultReleasedAnswers,
  refusedForEveryReason,
  testEvents,
  testStream,
  type TestEnvelope,
} from './fixtures.js';

function expectValid(envelope: TestEnvelope): void {
  // Parse what goes over the wire, not the object: undefined fields vanish in JSON.
  const wire: unknown = JSON.parse(JSON.stringify(envelope));
  const parsedEnvelope = envelopeSchema.safeParse(wire);
  expect(parsedEnvelope.error?.issues).toBeUndefined();
  const schema = eventDataSchemas[envelope.event as keyof typeof eventDataSchemas];
  expect(schema, envelope.event).toBeDefined();
  const parsedData = schema.safeParse((wire as { data: unknown }).data);
  expect(parsedData.error?.issues).toBeUndefined();
}

describe('event vocabulary', () => {
  it('matches the core: every type, the attested ones and the refusal reasons', () => {
    expect([...TEST_EVENT_TYPES].sort()).toEqual([...KNOWN_EVENT_TYPES].sort());
    expect([...ATTESTED_TEST_EVENT_TYPES].sort()).toEqual([...ATTESTED_EVENT_TYPES].sort());
    expect([...DATA_REQUEST_REFUSAL_REASONS]).toEqual([...CORE_REFUSAL_REASONS]);
  });
});

describe('fixtures', () => {
  it('produce envelopes that pass envelopeSchema and the data schema of their type, for every type', () => {
    for (const type of TEST_EVENT_TYPES) {
      const envelope = createTestEvent(type);
      expect(envelope.event).toBe(type);
      expectValid(envelope);
    }
    for (const factory of Object.values(testEvents)) expectValid(factory());
    expect(Object.keys(testEvents)).toHaveLength(TEST_EVENT_TYPES.length);
  });

  it('fill the envelope fields the spec requires', () => {
    const before = Math.floor(Date.now() / 1000);
    const envelope = testEvents.dataRequestPendingApproval();
    expect(envelope.event_id).toMatch(/^[0-7][0-9A-HJKMNP-TV-Z]{25}$/);
    expect(envelope.seq).toBe(0);
    expect(envelope.timestamp).toBeGreaterThanOrEqual(before);
    expect(envelope.api_version).toBe(TEST_API_VERSION);
    expect(envelope.data.request_id).toBe(envelope.stream_id);
    expect(envelope).not.toHaveProperty('attestation');
    expect(testEvents.dataRequestPendingApproval().event_id).not.toBe(envelope.event_id);
  });

  it('price the quote and charge only what was released, with lines that add up', () => {
    const { price } = testEvents.dataRequestPendingApproval().data as {
      price: { quoted_cents: number; currency: string; lines: { cents: number }[] };
    };
    const { charge, field_count } = testEvents.dataRequestReleased().data as {
      charge: { charged_cents: number; lines: { field: string; cents: number }[] };
      field_count: number;
    };
    expect(price.currency).toBe('EUR');
    expect(price.quoted_cents).toBe(price.lines.reduce((sum, line) => sum + line.cents, 0));
    expect(charge.charged_cents).toBe(charge.lines.reduce((sum, line) => sum + line.cents, 0));
    expect(charge.charged_cents).toBeLessThan(price.quoted_cents);
    expect(field_count).toBe(new Set(defaultReleasedAnswers().map((answer) => answer.name)).size);
    expect(new Set(charge.lines.map((line) => line.field))).toEqual(
      new Set(defaultReleasedAnswers().map((a) => a.name)),
    );
  });

  it('default release answers have two directors answering the same field names', () => {
    const answers = defaultReleasedAnswers();
    const directorNames = answers.filter((answer) => answer.name === 'director_name');
    expect(directorNames).toHaveLength(2);
    expect(directorNames.every((answer) => answer.subject_type === 'director')).toBe(true);
    expect(new Set(directorNames.map((answer) => answer.subject))).toEqual(
      new Set([TEST_SUBJECTS.firstDirector, TEST_SUBJECTS.secondDirector]),
    );
    // The trap the fixture exists for: keyed by name alone, answers are lost.
    expect(new Map(answers.map((answer) => [answer.name, answer])).size).toBeLessThan(answers.length);
    expect(new Map(answers.map((answer) => [`${answer.subject}\u0000${answer.name}`, answer])).size).toBe(
      answers.length,
    );
    // Fresh array each call, so one test's changes never leak into another.
    expect(defaultReleasedAnswers()).not.toBe(answers);
  });

  it('merge overrides over the defaults, keeping request_id on the chosen stream', () => {
    const envelope = testEvents.dataRequestPendingApproval({
      stream_id: 'dr_custom',
      seq: 4,
      data: { offer_id: 'offer_42', price: undefined },
    });
    expect(envelope).toMatchObject({
      stream_id: 'dr_custom',
      seq: 4,
      data: { request_id: 'dr_custom', offer_id: 'offer_42' },
    });
    expect(JSON.parse(JSON.stringify(envelope)).data).not.toHaveProperty('price');
    expect(envelope.data.expires_at).toEqual(expect.any(String));
    expectValid(envelope);
  });

  it('make one refused event per refusal reason of spec §3', () => {
    const events = refusedForEveryReason();
    expect(events.map((event) => event.data.reason)).toEqual([...DATA_REQUEST_REFUSAL_REASONS]);
    for (const event of events) expectValid(event);
    expect(new Set(events.map((event) => event.stream_id)).size).toBe(events.length);
  });

  it('carry the shapes spec §6 names for signature and wallet events', () => {
    expect(testEvents.signatureRequestPendingApproval().data).toMatchObject({
      digest: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      message_kind: expect.any(String),
      expires_at: expect.any(String),
    });
    expect(testEvents.signatureRequestSigned().data).toMatchObject({
      signature: expect.stringMatching(/^0x[0-9a-f]{130}$/),
      digest: expect.any(String),
      signed_at: expect.any(String),
      verification: {},
    });
    expect(testEvents.signatureRequestRefused().data).toMatchObject({ reason: 'declined', digest: expect.any(String) });
    expect(testEvents.businessWalletAddressChanged().data).toEqual({
      previous_wallet_address: TEST_SUBJECTS.business,
      wallet_address: TEST_SUBJECTS.newBusinessWallet,
    });
  });
});

describe('testStream', () => {
  it('makes n events of one stream with seq 0..n-1 and distinct event ids', () => {
    const events = testStream(5);
    expect(events.map((event) => event.seq)).toEqual([0, 1, 2, 3, 4]);
    expect(new Set(events.map((event) => event.stream_id)).size).toBe(1);
    expect(new Set(events.map((event) => event.event_id)).size).toBe(5);
    for (const event of events) expectValid(event);
  });

  it('follows a list of types on a given stream', () => {
    const [pending, released] = testStream(['kyb.data_request.pending_approval', 'kyb.data_request.released'], {
      stream_id: 'dr_life',
    });
    expect(pending).toMatchObject({ event: 'kyb.data_request.pending_approval', seq: 0, stream_id: 'dr_life' });
    expect(released).toMatchObject({ event: 'kyb.data_request.released', seq: 1, data: { request_id: 'dr_life' } });
  });
});
