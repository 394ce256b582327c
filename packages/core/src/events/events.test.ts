import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createTestEvent, testEvents } from '../../test-kit.js';
import {
  approvalSchema,
  chargeSchema,
  eventDataSchemas,
  priceLineSchema,
  priceSchema,
  releasedAnswerSchema,
  timestampSchema,
  type KnownEventType,
} from './events.js';
import { ATTESTED_EVENT_TYPES, KNOWN_EVENT_TYPES } from './event-types.js';
import { DATA_REQUEST_REFUSAL_REASONS } from './refusal-reasons.js';

describe('timestamps inside data', () => {
  it.each([
    1767225600,
    1767225600123,
    '1767225600',
    '2026-12-01T00:00:00Z',
    '2026-12-01T00:00:00.123+02:00',
    '2026-12-01',
  ])('accepts %s', (value) => {
    expect(timestampSchema.safeParse(value).success).toBe(true);
  });
  it.each(['x', '', 'tomorrow', -1, Number.POSITIVE_INFINITY, '2026-13-01', null])('rejects %s', (value) => {
    expect(timestampSchema.safeParse(value).success).toBe(false);
  });
  // The plan tries them in the schema's order and zod keeps the first that matches: the order may only change the
  // work, never the outcome (the date-time is listed before the digits, as the likelier string).
  it('never accepts one value by two of its alternatives, so their order changes no outcome', () => {
    const accepting = (value: unknown) =>
      timestampSchema._zod.def.options.filter((option) => option.safeParse(value).success);
    const date = fc.date({ min: new Date(0), max: new Date(Date.UTC(9999, 11, 31)), noInvalidDate: true });
    const values = fc.oneof(
      fc.string(),
      fc.stringMatching(/^\d{1,17}$/),
      fc.double({ noNaN: true }),
      date.map((at) => at.toISOString()),
      date.map((at) => at.toISOString().slice(0, 10)),
      date.map((at) => at.toISOString().replace('Z', '+05:30')),
    );
    fc.assert(fc.property(values, (value) => accepting(value).length <= 1));
    expect(accepting('2026-12-01T00:00:00Z')).toEqual([timestampSchema._zod.def.options[1]]);
  });
});

// The shapes of spec 2.5–2.7 and 6, one rule per case. Each refused case breaks exactly one field of a valid value.
const line = { field: 'registered_country', tier: 'basic', cents: 50 };
const price = { quoted_cents: 150, currency: 'EUR', lines: [line] };
const charge = { charged_cents: 100, currency: 'EUR', lines: [line] };

describe('price and charge objects (spec 2.5)', () => {
  it.each<[string, Record<string, unknown>]>([
    ['quoted_cents not an integer', { ...price, quoted_cents: 1.5 }],
    ['quoted_cents missing', { ...price, quoted_cents: undefined }],
    ['currency not a string', { ...price, currency: 978 }],
    ['lines not an array', { ...price, lines: line }],
    ['a line whose cents is not an integer', { ...price, lines: [{ ...line, cents: 0.5 }] }],
    ['a line without field', { ...price, lines: [{ ...line, field: undefined }] }],
    ['a line without tier', { ...price, lines: [{ ...line, tier: undefined }] }],
  ])('refuses a price with %s', (_case, value) => {
    expect(priceSchema.safeParse(value).success).toBe(false);
  });

  it.each<[string, Record<string, unknown>]>([
    ['charged_cents not an integer', { ...charge, charged_cents: 99.9 }],
    ['charged_cents missing', { ...charge, charged_cents: undefined }],
    ['currency not a string', { ...charge, currency: null }],
    ['a line whose cents is not an integer', { ...charge, lines: [{ ...line, cents: '50' }] }],
  ])('refuses a charge with %s', (_case, value) => {
    expect(chargeSchema.safeParse(value).success).toBe(false);
  });

  it.each<[string, { safeParse(value: unknown): { success: boolean } }, Record<string, unknown>]>([
    ['a price', priceSchema, price],
    ['a charge', chargeSchema, charge],
    ['a price line', priceLineSchema, line],
  ])('accepts %s with every field of the spec', (_case, schema, value) => {
    expect(schema.safeParse(value).success).toBe(true);
  });

  it.each<[string, KnownEventType, Record<string, unknown>]>([
    [
      'pending approval data without price',
      'kyb.data_request.pending_approval',
      testEvents.dataRequestPendingApproval().data,
    ],
    ['released data without charge', 'kyb.data_request.released', testEvents.dataRequestReleased().data],
  ])('accepts %s (requests created before pricing existed; spec 2.5, 9.3)', (_case, type, data) => {
    const { price: _price, charge: _charge, ...rest } = data;
    expect(eventDataSchemas[type].safeParse(rest).success).toBe(true);
  });
});

describe('released answer entries (spec 2.6)', () => {
  const entry = { name: 'director_full_name', subject_type: 'director', subject: 'subj-1', value: 'Ada Lovelace' };

  it('accepts an entry with name, subject_type, subject and any value', () => {
    expect(releasedAnswerSchema.safeParse({ ...entry, value: { nested: [1] } }).success).toBe(true);
  });

  it.each(['name', 'subject_type', 'subject'])('refuses an entry without %s', (field) => {
    expect(releasedAnswerSchema.safeParse({ ...entry, [field]: undefined }).success).toBe(false);
  });
});

describe('approval block (spec 2.7)', () => {
  const approval = { approved_at: '2026-11-22T12:00:00Z', action_id: 'act_1', threshold_met: true };

  it('accepts approved_at, action_id and threshold_met on released data', () => {
    expect(
      eventDataSchemas['kyb.data_request.released'].safeParse({ ...testEvents.dataRequestReleased().data, approval })
        .success,
    ).toBe(true);
  });

  it.each<[string, Record<string, unknown>]>([
    ['threshold_met not a boolean', { ...approval, threshold_met: 'yes' }],
    ['no action_id', { ...approval, action_id: undefined }],
    ['no approved_at', { ...approval, approved_at: undefined }],
  ])('refuses an approval block with %s', (_case, value) => {
    expect(approvalSchema.safeParse(value).success).toBe(false);
  });
});

describe('event types (spec 6)', () => {
  it('knows exactly the seven event types of spec 6', () => {
    expect([...KNOWN_EVENT_TYPES].sort()).toEqual([
      'kyb.business.wallet_address_changed',
      'kyb.data_request.pending_approval',
      'kyb.data_request.refused',
      'kyb.data_request.released',
      'kyb.signature_request.pending_approval',
      'kyb.signature_request.refused',
      'kyb.signature_request.signed',
    ]);
  });

  it('marks exactly the release and the wallet change as attested', () => {
    expect([...ATTESTED_EVENT_TYPES].sort()).toEqual([
      'kyb.business.wallet_address_changed',
      'kyb.data_request.released',
    ]);
  });

  it('names the seven refusal reasons of spec 3', () => {
    expect(DATA_REQUEST_REFUSAL_REASONS).toEqual([
      'declined',
      'threshold_not_met',
      'expired',
      'business_not_verified',
      'business_wallet_rotated',
      'cancelled_by_merchant',
      'unavailable',
    ]);
  });

  it.each<[KnownEventType, string]>([
    ['kyb.data_request.pending_approval', 'expires_at'],
    ['kyb.data_request.released', 'request_id'],
    ['kyb.data_request.released', 'released_at'],
    ['kyb.data_request.released', 'field_count'],
    ['kyb.data_request.released', 'pii_included'],
    ['kyb.data_request.released', 'attestation_kid'],
    ['kyb.data_request.released', 'attestation_expires_at'],
    ['kyb.data_request.refused', 'reason'],
    ['kyb.signature_request.pending_approval', 'digest'],
    ['kyb.signature_request.pending_approval', 'message_kind'],
    ['kyb.signature_request.signed', 'signature'],
    ['kyb.signature_request.signed', 'digest'],
    ['kyb.signature_request.signed', 'signed_at'],
    ['kyb.signature_request.signed', 'verification'],
    ['kyb.signature_request.refused', 'reason'],
    ['kyb.signature_request.refused', 'digest'],
    ['kyb.business.wallet_address_changed', 'previous_wallet_address'],
  ])('refuses %s data without %s', (type, field) => {
    const data: Record<string, unknown> = { ...createTestEvent(type).data, [field]: undefined };
    expect(eventDataSchemas[type].safeParse(data).success).toBe(false);
  });

  it.each(KNOWN_EVENT_TYPES)('accepts the data the test kit sends for %s, with an unknown field added', (type) => {
    expect(eventDataSchemas[type].safeParse({ ...createTestEvent(type).data, added_later: 1 }).success).toBe(true);
  });

  it('accepts an offer_id on pending approval data (a request claimed from a QR offer)', () => {
    expect(
      eventDataSchemas['kyb.data_request.pending_approval'].safeParse({
        ...testEvents.dataRequestPendingApproval().data,
        offer_id: 'offer_42',
      }).success,
    ).toBe(true);
  });

  it('keeps a refusal reason this version does not know', () => {
    expect(eventDataSchemas['kyb.data_request.refused'].safeParse({ reason: 'sanctions_hit' })).toMatchObject({
      success: true,
      data: { reason: 'sanctions_hit' },
    });
  });
});
