import { beforeAll, describe, expect, expectTypeOf, it, vi } from 'vitest';
import {
  createTestSigner,
  refusedForEveryReason,
  testEvents,
  type SignOptions,
  type TestEnvelope,
  type TestSigner,
} from '../test-kit.js';
import { platformCrypto as selectedCrypto } from '#crypto';
import { platformCrypto as nodeCrypto } from './verify/crypto/node.js';
import { platformCrypto as webCrypto } from './verify/crypto/web.js';
import type { PlatformCrypto } from './verify/crypto/types.js';
import type { ClaimResult, DedupeStore } from './store/dedupe.js';
import type { LogEntry } from './log/logger.js';
import { createMemoryStore } from './store/memory-store.js';
import { createReceiver, type ReceiverOptions } from './receiver.js';
import type { AttestationClaims } from './verify/attestation.js';
import type { ReleasedAnswers } from './events/released-answers.js';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
/** The envelope's genuine token with its payload swapped for another genuine token's: a signature over other claims. */
async function withForeignPayload(envelope: TestEnvelope): Promise<string> {
  const [header, , signature] = (await signer.attest(envelope)).split('.') as [string, string, string];
  const [, payload] = (await signer.attest(envelope, { claims: { seq: envelope.seq, note: 'other claims' } })).split(
    '.',
  ) as [string, string];
  return `${header}.${payload}.${signature}`;
}
/** Spec 3: the refusal reasons of a data request. */
const REFUSAL_REASONS = [
  'declined',
  'threshold_not_met',
  'expired',
  'business_not_verified',
  'business_wallet_rotated',
  'cancelled_by_merchant',
  'unavailable',
];
let signer: TestSigner;
let stranger: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({
    now: NOW,
    secrets: { '2': 'old-secret-v2', '3': 'new-secret-v3' },
    currentVersion: '3',
  });
  stranger = await createTestSigner({ now: NOW });
});

it('selects node:crypto through the package imports map on Node', () => {
  expect(selectedCrypto.name).toBe('node');
});

describe.each<[string, PlatformCrypto]>([
  ['node:crypto', nodeCrypto],
  ['Web Crypto', webCrypto],
])('receiver (%s)', (_name, crypto) => {
  function setup(overrides: Partial<ReceiverOptions> = {}) {
    const logs: LogEntry[] = [];
    const receiver = createReceiver({
      secrets: { '2': { secret: 'old-secret-v2', notAfter: NOW + 3600_000 }, '3': 'new-secret-v3' },
      attestation: { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
      now: () => NOW,
      logger: (entry) => logs.push(entry),
      crypto,
      ...overrides,
    });
    const deliver = async (envelope: TestEnvelope, options?: SignOptions, from = signer) => {
      const { headers, body } = await from.sign(envelope, options);
      return receiver.receive({ method: 'POST', headers, body });
    };
    return { receiver, deliver, logs };
  }

  describe('answers are frozen shared objects, so a hook that edits one answer cannot change the next one', () => {
    it('refuses an edit of a success body', async () => {
      const { deliver } = setup();
      const first = await deliver(testEvents.dataRequestPendingApproval());
      expect(() => {
        (first.body as { received: boolean }).received = false;
      }).toThrow(TypeError);
    });

    it('refuses an edit of success headers', async () => {
      const { deliver } = setup();
      const first = await deliver(testEvents.dataRequestPendingApproval());
      expect(() => {
        first.headers['x-extra'] = '1';
      }).toThrow(TypeError);
    });

    it('answers the next success unchanged after a hook tried to edit the first', async () => {
      const { deliver } = setup();
      const first = await deliver(testEvents.dataRequestPendingApproval());
      try {
        (first.body as { received: boolean }).received = false;
        first.headers['x-extra'] = '1';
      } catch {
        // the edit is refused; what matters is the next answer
      }
      expect(await deliver(testEvents.dataRequestPendingApproval())).toMatchObject({
        status: 200,
        headers: {},
        body: { received: true },
      });
    });

    it('refuses an edit of a rejection header (405 Allow) and keeps it for the next rejection', async () => {
      const { receiver } = setup();
      const refused = await receiver.receive({ method: 'GET', headers: {}, body: '' });
      expect(() => {
        refused.headers['allow'] = 'GET';
      }).toThrow(TypeError);
      expect((await receiver.receive({ method: 'GET', headers: {}, body: '' })).headers).toEqual({ allow: 'POST' });
    });
  });

  it('accepts an HMAC-only event, types it, and tells the handler how it was authenticated', async () => {
    const { receiver, deliver } = setup();
    const handler = vi.fn();
    receiver.on('kyb.data_request.pending_approval', handler);
    const envelope = testEvents.dataRequestPendingApproval();
    const result = await deliver(envelope, { attempt: 2 });
    expect(result).toMatchObject({ status: 200, body: { received: true } });
    expect(result.code).toBeUndefined();
    expect(handler).toHaveBeenCalledOnce();
    const [event, context] = handler.mock.calls[0]!;
    expect(event).toMatchObject({ event_id: envelope.event_id, data: { price: { currency: 'EUR' } } });
    expect(context).toMatchObject({
      authentication: { hmac: { version: '3' }, attestation: false },
      claims: undefined,
      deliveryAttempt: 2,
    });
  });

  it('accepts an attested release and exposes both directors answering the same field', async () => {
    const { receiver, deliver } = setup();
    let seen: { answers: ReleasedAnswers; claims: AttestationClaims } | undefined;
    receiver.on('kyb.data_request.released', (event, context) => {
      expectTypeOf(event.data.field_count).toEqualTypeOf<number>();
      expectTypeOf(context.answers).toEqualTypeOf<ReleasedAnswers>();
      seen = context;
    });
    const envelope = testEvents.dataRequestReleased();
    expect((await deliver(envelope)).status).toBe(200);
    expect(seen!.claims.event_id).toBe(envelope.event_id);
    const names = [...seen!.answers].map((answer) => answer.name);
    const repeated = names.find((name, index) => names.indexOf(name) !== index);
    expect(repeated).toBeDefined();
    const both = seen!.answers.byName(repeated!);
    expect(both).toHaveLength(2);
    expect(new Set(both.map((answer) => answer.subject)).size).toBe(2);
  });

  it('gives a release handler the answers of attestation.answersClaim, the claim the binding read them from', async () => {
    const named = [{ name: 'company_name', subject_type: 'business', subject: '0xabc', value: 'Named Claim Ltd' }];
    const answersOf = async (answersClaim?: string) => {
      const { receiver, deliver } = setup({
        attestation: { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks, answersClaim },
      });
      let seen: ReleasedAnswers | undefined;
      receiver.on('kyb.data_request.released', (_event, context) => {
        seen = context.answers;
      });
      const result = await deliver(testEvents.dataRequestReleased(), { claims: { released_values: named } });
      expect(result.status).toBe(200);
      return [...seen!].map((answer) => answer.value);
    };
    expect(await answersOf('released_values')).toEqual(['Named Claim Ltd']);
    expect(await answersOf()).not.toContain('Named Claim Ltd'); // the service's `answers` claim comes first
  });

  it('acknowledges a duplicate without running the handler again', async () => {
    const { receiver, deliver } = setup();
    const handler = vi.fn();
    receiver.on('kyb.data_request.refused', handler);
    const envelope = testEvents.dataRequestRefused();
    expect((await deliver(envelope)).status).toBe(200);
    const again = await deliver(envelope, { attempt: 2 });
    expect(again).toMatchObject({ status: 200, code: 'duplicate', body: { received: true, code: 'duplicate' } });
    expect(handler).toHaveBeenCalledOnce();
  });

  it('runs the handler exactly once when 100 deliveries of one event arrive at once, and acks only after it finished', async () => {
    const { receiver, deliver } = setup();
    let runs = 0;
    let finished = false;
    receiver.on('kyb.signature_request.signed', async () => {
      runs++;
      await new Promise((resolve) => setTimeout(resolve, 30));
      finished = true;
    });
    const envelope = testEvents.signatureRequestSigned();
    const results = await Promise.all(
      Array.from({ length: 100 }, async () => {
        const result = await deliver(envelope);
        if (result.status === 200 && !result.code) expect(finished).toBe(true);
        return result;
      }),
    );
    expect(runs).toBe(1);
    expect(results.filter((result) => result.status === 200 && !result.code)).toHaveLength(1);
    expect(
      results.filter((result) => result.status === 200 && result.code === 'duplicate').length +
        results.filter((result) => result.status === 409).length,
    ).toBe(99);
    expect(results.filter((result) => result.status === 409)[0]?.body).toEqual({
      error: { code: 'in_progress', message: expect.any(String) },
    });
    expect((await deliver(envelope)).code).toBe('duplicate');
  });

  it('answers 500 when a handler throws, and the next delivery runs it again', async () => {
    const { receiver, deliver, logs } = setup();
    const errors: unknown[] = [];
    receiver.onError((error) => errors.push(error));
    let calls = 0;
    receiver.on('kyb.data_request.pending_approval', () => {
      calls++;
      if (calls === 1) throw new Error('database down');
    });
    const envelope = testEvents.dataRequestPendingApproval();
    const failed = await deliver(envelope);
    expect(failed).toMatchObject({ status: 500, code: 'handler_failed' });
    expect(JSON.stringify(failed.body)).not.toContain('database down');
    expect(errors).toHaveLength(1);
    expect(logs.some((entry) => entry.code === 'handler_failed' && entry.level === 'error')).toBe(true);
    expect((await deliver(envelope, { attempt: 2 })).status).toBe(200);
    expect(calls).toBe(2);
  });

  it('fails the delivery when any of several handlers fails, onAny included', async () => {
    const { receiver, deliver } = setup();
    const typed = vi.fn();
    receiver.on('kyb.data_request.pending_approval', typed).onAny(async () => {
      throw new Error('audit log down');
    });
    expect((await deliver(testEvents.dataRequestPendingApproval())).status).toBe(500);
    expect(typed).toHaveBeenCalledOnce();
  });

  it('lets a later delivery take over an expired lease (a crashed handler)', async () => {
    let now = NOW;
    const store = createMemoryStore({ now: () => now });
    const { receiver, deliver } = setup({ store, leaseMs: 1000, handlerTimeoutMs: 500, storeTimeoutMs: 100 });
    let calls = 0;
    receiver.on('kyb.data_request.pending_approval', () => {
      calls++;
      if (calls === 1) return new Promise(() => {}); // never settles: the process "crashed" mid-handler
    });
    const envelope = testEvents.dataRequestPendingApproval();
    void deliver(envelope);
    await vi.waitFor(() => expect(calls).toBe(1));
    expect((await deliver(envelope)).status).toBe(409);
    now += 1000;
    expect((await deliver(envelope)).status).toBe(200);
    expect(calls).toBe(2);
  });

  describe('signature header', () => {
    it.each<[string, SignOptions, number, string]>([
      ['a forged MAC', { secret: 'forged' }, 401, 'signature_mismatch'],
      ['a stale t', { timestamp: NOW / 1000 - 301 }, 401, 'signature_expired'],
      ['a future t', { timestamp: NOW / 1000 + 301 }, 401, 'signature_future'],
      ['an unknown kv', { version: '9' }, 401, 'signature_unknown_version'],
    ])('rejects %s without running handlers or poisoning dedupe', async (_case, options, status, code) => {
      const { receiver, deliver } = setup();
      const handler = vi.fn();
      receiver.onAny(handler);
      const envelope = testEvents.dataRequestPendingApproval();
      expect(await deliver(envelope, options)).toMatchObject({ status, code, body: { error: { code } } });
      expect(handler).not.toHaveBeenCalled();
      expect((await deliver(envelope)).status).toBe(200);
      expect(handler).toHaveBeenCalledOnce();
    });

    it('accepts the old secret version during the overlap', async () => {
      const { deliver } = setup();
      expect((await deliver(testEvents.dataRequestPendingApproval(), { version: '2' })).status).toBe(200);
    });

    it('refuses the old secret version after its notAfter', async () => {
      const later = setup({ now: () => NOW + 3600_001 });
      const old = await signer.sign(testEvents.dataRequestPendingApproval(), {
        version: '2',
        timestamp: Math.floor((NOW + 3600_001) / 1000),
      });
      expect(await later.receiver.receive({ headers: old.headers, body: old.body })).toMatchObject({
        status: 401,
        code: 'signature_version_expired',
      });
    });

    it.each<
      [
        string,
        (signed: { headers: Record<string, string>; body: Uint8Array; text: string }) => {
          headers: Record<string, string>;
          body: Uint8Array;
        },
        number,
        string,
      ]
    >([
      [
        'a tampered body',
        (signed) => ({
          headers: signed.headers,
          body: new TextEncoder().encode(signed.text.replace('"EUR"', '"USD"')),
        }),
        401,
        'signature_mismatch',
      ],
      [
        'a missing header',
        (signed) => {
          const { 'service-kyb-signature': _removed, ...unsigned } = signed.headers;
          return { headers: unsigned, body: signed.body };
        },
        401,
        'signature_missing',
      ],
      [
        'a malformed header',
        (signed) => ({
          headers: { ...signed.headers, 'service-kyb-signature': 't=abc,v1=00,kv=3' },
          body: signed.body,
        }),
        400,
        'signature_malformed',
      ],
    ])('rejects %s with %i %s', async (_case, change, status, code) => {
      const { receiver } = setup();
      const signed = await signer.sign(testEvents.dataRequestPendingApproval());
      expect(await receiver.receive(change(signed))).toMatchObject({ status, code });
    });

    it('reads headers from a Web Headers object', async () => {
      const { receiver } = setup();
      const signed = await signer.sign(testEvents.dataRequestPendingApproval());
      expect((await receiver.receive({ headers: new Headers(signed.headers), body: signed.body })).status).toBe(200);
    });

    it('reads headers from a record with upper-case names', async () => {
      const { receiver } = setup();
      const signed = await signer.sign(testEvents.dataRequestPendingApproval());
      const upper = Object.fromEntries(
        Object.entries(signed.headers).map(([key, value]) => [key.toUpperCase(), value]),
      );
      expect((await receiver.receive({ headers: upper, body: signed.body })).status).toBe(200);
    });
  });

  describe('limits, body and envelope', () => {
    it('answers 405 method_not_allowed with Allow: POST', async () => {
      const { receiver } = setup();
      const signed = await signer.sign(testEvents.dataRequestPendingApproval());
      expect(await receiver.receive({ method: 'GET', headers: signed.headers, body: signed.body })).toMatchObject({
        status: 405,
        code: 'method_not_allowed',
        headers: { allow: 'POST' },
      });
    });

    it('answers 413 body_too_large above maxBodyBytes', async () => {
      const { receiver } = setup({ maxBodyBytes: 2048 });
      const big = signer.signBytes(JSON.stringify({ pad: 'x'.repeat(4096) }));
      expect(await receiver.receive({ headers: big.headers, body: big.body })).toMatchObject({
        status: 413,
        code: 'body_too_large',
      });
    });

    it('answers 415 unsupported_media_type for text/plain', async () => {
      const { receiver } = setup();
      const signed = await signer.sign(testEvents.dataRequestPendingApproval());
      const text = signer.signBytes(signed.text, { contentType: 'text/plain' });
      expect(await receiver.receive({ headers: text.headers, body: text.body })).toMatchObject({
        status: 415,
        code: 'unsupported_media_type',
      });
    });

    it('accepts application/json in any case and with a charset', async () => {
      const { receiver } = setup();
      const signed = await signer.sign(testEvents.dataRequestPendingApproval());
      const charset = signer.signBytes(signed.text, { contentType: 'Application/JSON; charset=utf-8' });
      expect((await receiver.receive({ headers: charset.headers, body: charset.body })).status).toBe(200);
    });

    it.each<[string, string | Uint8Array]>([
      ['invalid JSON', '{"event":'],
      ['non-UTF-8 bytes', new Uint8Array([0x7b, 0x22, 0xe9, 0x22, 0x3a, 0x31, 0x7d])],
    ])('answers 400 body_not_json for %s with a valid HMAC', async (_case, bytes) => {
      const { receiver } = setup();
      const signed = signer.signBytes(bytes);
      expect(await receiver.receive({ headers: signed.headers, body: signed.body })).toMatchObject({
        status: 400,
        code: 'body_not_json',
      });
    });

    it('answers signature_mismatch, not body_not_json, for bytes that are not JSON under a bad MAC', async () => {
      const { receiver } = setup();
      const latin1 = signer.signBytes(new Uint8Array([0x7b, 0x22, 0xe9, 0x22, 0x3a, 0x31, 0x7d]));
      const forged = {
        ...latin1.headers,
        'service-kyb-signature': signer.hmacHeader(latin1.body, { secret: 'forged' }),
      };
      expect((await receiver.receive({ headers: forged, body: latin1.body })).code).toBe('signature_mismatch');
    });

    it.each<[string, Record<string, unknown>]>([
      ['a short event_id', { event_id: '01ABC' }],
      ['a non-integer seq', { seq: 1.5 }],
      ['a negative seq', { seq: -1 }],
      ['a non-date api_version', { api_version: 'v1' }],
      ['data not an object', { data: [1] }],
      ['no event', { event: undefined }],
      ['a string timestamp', { timestamp: '1767225600' }],
    ])('answers 400 envelope_invalid for %s', async (_case, change) => {
      const { receiver } = setup();
      const signed = signer.signBytes(JSON.stringify({ ...testEvents.dataRequestPendingApproval(), ...change }));
      expect(await receiver.receive({ headers: signed.headers, body: signed.body })).toMatchObject({
        status: 400,
        code: 'envelope_invalid',
      });
    });

    it('answers 500 body_already_parsed when handed an object instead of bytes', async () => {
      const { receiver } = setup();
      const signed = await signer.sign(testEvents.dataRequestPendingApproval());
      const result = await receiver.receive({ headers: signed.headers, body: JSON.parse(signed.text) as never });
      expect(result).toMatchObject({ status: 500, code: 'body_already_parsed' });
      expect((result.body as { error: { message: string } }).error.message).toMatch(/before any JSON body parser/);
    });

    it('keeps unknown fields and accepts what a reasonable service sends where the spec shows no type', async () => {
      const { receiver, deliver } = setup();
      const handler = vi.fn();
      receiver.on('kyb.data_request.pending_approval', handler);
      const envelope = {
        ...testEvents.dataRequestPendingApproval({
          data: { expires_at: '2026-12-01T00:00:00Z', price: undefined, new_field: 1 },
        }),
        new_top: true,
      };
      expect((await deliver(envelope)).status).toBe(200);
      expect(handler.mock.calls[0]![0]).toMatchObject({
        new_top: true,
        data: { new_field: 1, expires_at: '2026-12-01T00:00:00Z' },
      });
      expect(handler.mock.calls[0]![0].data.price).toBeUndefined();
    });

    // The pipeline tells a pending answer from a ready one by its `then`, and a refusal by its `code`: on its own
    // values only, never on the payload, which may hold any key.
    it.each<[string, Record<string, unknown>]>([
      ['then (a string)', { then: 'later' }],
      ['then (an object)', { then: { at: 1 } }],
      ['code', { code: 'body_too_large' }],
    ])('handles an event with a field named %s, at the top and in its data, as any other', async (_name, fields) => {
      const { receiver, deliver } = setup();
      const handler = vi.fn();
      receiver.onAny(handler);
      const typed = {
        ...testEvents.dataRequestPendingApproval({ data: { expires_at: '2026-12-01T00:00:00Z', ...fields } }),
        ...fields,
      };
      const untyped = { ...testEvents.dataRequestPendingApproval(), event: 'kyb.future_event', ...fields };
      expect(await deliver(typed)).toMatchObject({ status: 200, body: { received: true } });
      expect(await deliver(untyped)).toMatchObject({ status: 200, body: { received: true } });
      expect(handler.mock.calls.map(([event]) => [event.event, event.then, event.code])).toEqual([
        ['kyb.data_request.pending_approval', fields.then, fields.code],
        ['kyb.future_event', fields.then, fields.code],
      ]);
      expect(handler.mock.calls[0]![0].data).toMatchObject(fields);
    });

    it('answers 422 event_data_invalid for a verified event whose data breaks its schema, without running handlers', async () => {
      const { receiver, deliver, logs } = setup();
      const handler = vi.fn();
      receiver.onAny(handler);
      const envelope = testEvents.dataRequestReleased({ data: { field_count: 'three' } });
      expect(await deliver(envelope)).toMatchObject({ status: 422, code: 'event_data_invalid' });
      expect(handler).not.toHaveBeenCalled();
      expect(logs.find((entry) => entry.code === 'event_data_invalid')?.detail).toBe('field_count: invalid_type');
    });

    it('has a refused fixture for each of the seven refusal reasons of spec 3', () => {
      expect(refusedForEveryReason().map((envelope) => envelope.data.reason)).toEqual(REFUSAL_REASONS);
    });

    it.each<[string, string]>([
      ...REFUSAL_REASONS.map((reason): [string, string] => [reason, reason]),
      ['sanctions_hit, a reason this version does not know', 'sanctions_hit'],
    ])('delivers the refusal reason %s to the handler', async (_label, reason) => {
      const { receiver, deliver } = setup();
      const reasons: string[] = [];
      receiver.on('kyb.data_request.refused', (event) => {
        reasons.push(event.data.reason);
      });
      expect((await deliver(testEvents.dataRequestRefused({ data: { reason } }))).status).toBe(200);
      expect(reasons).toEqual([reason]);
    });
  });

  describe('attestation', () => {
    it.each<[string, (envelope: TestEnvelope) => Promise<SignOptions>, string]>([
      ['missing on an attested type', async () => ({ attest: false }), 'attestation_missing'],
      ['a login token', async () => ({ attestation: await signer.loginToken() }), 'attestation_invalid_typ'],
      [
        'signed by an unknown key',
        async (envelope) => ({ attestation: await stranger.attest(envelope) }),
        'attestation_invalid',
      ],
      ['alg none', async (envelope) => ({ attestation: await signer.unsignedToken(envelope) }), 'attestation_invalid'],
      [
        'HS256 with the public key',
        async (envelope) => ({ attestation: await signer.hs256WithPublicKey(envelope) }),
        'attestation_invalid',
      ],
      ['expired', async () => ({ claims: { exp: NOW / 1000 - 120 } }), 'attestation_invalid'],
      ['for another audience', async () => ({ claims: { aud: 'someone-else' } }), 'attestation_invalid'],
      ['from another issuer', async () => ({ claims: { iss: 'https://kyb.attacker.example' } }), 'attestation_invalid'],
      [
        'a genuine signature over other claims (payload changed after signing)',
        async (envelope) => ({ attestation: await withForeignPayload(envelope) }),
        'attestation_invalid',
      ],
      [
        'relabelled to another seq',
        async (envelope) => ({ claims: { seq: envelope.seq + 1 } }),
        'attestation_relabelled',
      ],
    ])('rejects a release whose attestation is %s with 401', async (_case, options, code) => {
      const { receiver, deliver } = setup();
      const handler = vi.fn();
      receiver.onAny(handler);
      const envelope = testEvents.dataRequestReleased();
      expect(await deliver(envelope, await options(envelope))).toMatchObject({ status: 401, code });
      expect(handler).not.toHaveBeenCalled();
      expect((await deliver(envelope)).status).toBe(200);
    });

    it('rejects a delivery relabelled to another event_id with a valid HMAC over the new body', async () => {
      const { deliver } = setup();
      const original = testEvents.businessWalletAddressChanged();
      const token = await signer.attest(original);
      const relabelled = {
        ...original,
        event_id: testEvents.businessWalletAddressChanged().event_id,
        attestation: token,
      };
      expect(await deliver(relabelled)).toMatchObject({ status: 401, code: 'attestation_relabelled' });
    });

    describe('an attested event of a type this version does not know (spec 5.6, 9.2)', () => {
      const unknownType = (): TestEnvelope => ({
        ...testEvents.dataRequestRefused(),
        event: 'kyb.business.sanctions_flagged',
        data: { level: 'high' },
      });

      it('verifies it and hands it to onUnknown and onAny with its claims', async () => {
        const { receiver, deliver } = setup();
        const unknown = vi.fn();
        const any = vi.fn();
        receiver.onUnknown(unknown).onAny(any);
        const envelope = unknownType();
        expect((await deliver(envelope, { attest: true })).status).toBe(200);
        expect(unknown).toHaveBeenCalledOnce();
        expect(any).toHaveBeenCalledOnce();
        expect(unknown.mock.calls[0]![1]).toMatchObject({
          authentication: { attestation: true },
          claims: { event_id: envelope.event_id },
        });
      });

      it('rejects it relabelled to another event_id', async () => {
        const { deliver } = setup();
        const envelope = unknownType();
        const token = await signer.attest(envelope);
        expect(
          await deliver({ ...envelope, event_id: testEvents.dataRequestRefused().event_id, attestation: token }),
        ).toMatchObject({ status: 401, code: 'attestation_relabelled' });
      });

      it('rejects it with a token that is not a JWS', async () => {
        const { deliver } = setup();
        expect((await deliver(unknownType(), { attestation: 'x.y.z' })).code).toBe('attestation_invalid');
      });
    });

    it('rejects an attestation from an unknown key on a type the spec does not mark attested', async () => {
      const { deliver } = setup();
      const envelope = testEvents.signatureRequestSigned();
      expect((await deliver(envelope, { attestation: await stranger.attest(envelope) })).code).toBe(
        'attestation_invalid',
      );
    });

    it('answers 500 attestation_not_configured rather than skip an attestation it cannot check', async () => {
      const { deliver } = setup({ attestation: undefined });
      expect(await deliver(testEvents.dataRequestReleased())).toMatchObject({
        status: 500,
        code: 'attestation_not_configured',
      });
    });

    it('accepts unattested events on a receiver without attestation configured', async () => {
      const { deliver } = setup({ attestation: undefined });
      expect((await deliver(testEvents.dataRequestPendingApproval())).status).toBe(200);
    });

    it('without secrets, hands events without attestation only to onUnauthenticated and never lets them shadow a verified event', async () => {
      const { receiver, deliver } = setup({ secrets: undefined });
      const verified: unknown[] = [];
      const unauthenticated: unknown[] = [];
      receiver.onAny((_event, context) => {
        verified.push(context.authentication);
      });
      receiver.onUnauthenticated((_event, context) => {
        unauthenticated.push(context.authentication);
      });
      const released = testEvents.dataRequestReleased();
      // A forger reuses the event_id of a coming release on an unattested event.
      const forged = { ...testEvents.dataRequestPendingApproval(), event_id: released.event_id };
      const forgedResult = await deliver(forged);
      expect(forgedResult.status).toBe(200);
      expect(forgedResult.code).toBe('unauthenticated');
      expect((await deliver(released)).status).toBe(200);
      expect(unauthenticated).toEqual([{ hmac: null, attestation: false }]);
      expect(verified).toEqual([{ hmac: null, attestation: true }]);
    });
  });

  describe('store failures', () => {
    function failingStore(fail: 'claim' | 'complete' | 'release'): DedupeStore {
      const memory = createMemoryStore();
      return {
        claim: (id, options): ClaimResult | Promise<ClaimResult> =>
          fail === 'claim' ? Promise.reject(new Error('ECONNREFUSED')) : memory.claim(id, options),
        complete: (id, token, options) =>
          fail === 'complete' ? Promise.reject(new Error('ECONNRESET')) : memory.complete(id, token, options),
        release: (id, token) =>
          fail === 'release' ? Promise.reject(new Error('ECONNRESET')) : memory.release(id, token),
      };
    }

    it('answers 503 store_unavailable and runs no handler when the claim fails', async () => {
      const { receiver, deliver } = setup({ store: failingStore('claim') });
      const handler = vi.fn();
      receiver.onAny(handler);
      expect(await deliver(testEvents.dataRequestPendingApproval())).toMatchObject({
        status: 503,
        code: 'store_unavailable',
      });
      expect(handler).not.toHaveBeenCalled();
    });

    it('acknowledges a handler that succeeded even if recording completion fails, and logs it', async () => {
      const { receiver, deliver, logs } = setup({ store: failingStore('complete') });
      receiver.onAny(() => {});
      expect((await deliver(testEvents.dataRequestPendingApproval())).status).toBe(200);
      expect(logs.some((entry) => entry.level === 'error' && /complete failed/.test(entry.message))).toBe(true);
    });

    it('still answers 500 when a handler fails and the release fails too', async () => {
      const { receiver, deliver } = setup({ store: failingStore('release') });
      receiver.onAny(() => {
        throw new Error('boom');
      });
      expect((await deliver(testEvents.dataRequestPendingApproval())).status).toBe(500);
    });
  });

  it('answers bad input with a 4xx, never a 5xx or a throw (200 random mutations of signed bodies)', async () => {
    const { receiver } = setup();
    receiver.onAny(() => {});
    const base = (await signer.sign(testEvents.dataRequestReleased())).text;
    let seed = 42;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const statuses = new Set<number>();
    for (let i = 0; i < 200; i++) {
      const bytes = new TextEncoder().encode(base);
      const mutated = bytes.slice(0, random(bytes.length) + 1);
      for (let j = 0; j < 1 + random(4); j++) mutated[random(mutated.length)] = random(256);
      const delivery = signer.signBytes(mutated); // a valid HMAC, so parsing and every later stage are reached
      const result = await receiver.receive({ method: 'POST', headers: delivery.headers, body: delivery.body });
      statuses.add(result.status);
      expect(result.status === 200 || (result.status >= 400 && result.status < 500)).toBe(true);
    }
    expect(statuses.has(400)).toBe(true);
  });

  describe('never throws, and never logs a secret, a token or body content', () => {
    const marker = 'PII-Ada-Lovelace-4242';
    let token = '';
    let logged = '';
    let entries = 0;
    beforeAll(async () => {
      const { receiver, deliver, logs } = setup({
        logger: (entry) => {
          logs.push(entry);
          throw new Error('logger broken');
        },
      });
      const envelope = testEvents.dataRequestReleased({ data: { note: marker } });
      token = await signer.attest(envelope);
      const bad: SignOptions[] = [
        { secret: 'forged' },
        { claims: { seq: 99 } },
        { attestation: await signer.loginToken() },
        { header: { typ: 'JWT' } },
        {},
      ];
      for (const options of bad) await deliver(envelope, options);
      await receiver.receive({ headers: {}, body: marker });
      await receiver.receive({ headers: null as never, body: marker });
      logged = JSON.stringify(logs, (_key, value) =>
        value instanceof Error ? { name: value.name, message: value.message } : value,
      );
      entries = logs.length;
    });

    it('answers every delivery although the logger throws, and logs each', () => {
      expect(entries).toBeGreaterThan(5);
    });

    it.each<[string, () => string]>([
      ['the old secret', () => 'old-secret-v2'],
      ['the current secret', () => 'new-secret-v3'],
      ['a body marker', () => marker],
      ["the attestation's signature", () => token.split('.')[2]!],
      ['an answer value from the attestation', () => 'Ada Lovelace'],
    ])('never logs %s', (_case, secret) => {
      expect(logged).not.toContain(secret());
    });
  });
});

describe('createReceiver options', () => {
  it('refuses to start with neither secrets nor attestation, naming both', () => {
    expect(() => createReceiver({})).toThrowError(/secrets.*attestation/);
  });

  it('refuses an empty secrets keyring without attestation as config_invalid', () => {
    expect(() => createReceiver({ secrets: {} })).toThrowError(expect.objectContaining({ code: 'config_invalid' }));
  });

  it.each<[string, Partial<ReceiverOptions>, RegExp]>([
    ['maxBodyBytes: 0', { maxBodyBytes: 0 }, /maxBodyBytes/],
    ['toleranceSeconds: NaN', { toleranceSeconds: Number.NaN }, /toleranceSeconds/],
  ])('refuses the nonsense limit %s, naming it', (_case, limits, message) => {
    expect(() => createReceiver({ secrets: { '1': 's' }, ...limits })).toThrowError(message);
  });
});

describe('handler types', () => {
  it('types envelope fields and data by event name, and hands the handler exactly those values', async () => {
    const receiver = createReceiver({ secrets: { '3': 'new-secret-v3' }, now: () => NOW });
    const seen: unknown[] = [];
    receiver.on('kyb.signature_request.signed', (event) => {
      expectTypeOf(event.event_id).toEqualTypeOf<string>();
      expectTypeOf(event.seq).toEqualTypeOf<number>();
      expectTypeOf(event.event).toEqualTypeOf<'kyb.signature_request.signed'>();
      expectTypeOf(event.data.signature).toEqualTypeOf<string>();
      seen.push({ event_id: event.event_id, seq: event.seq, event: event.event, signature: event.data.signature });
    });
    receiver.onAny((event) => {
      expectTypeOf(event.event_id).toEqualTypeOf<string>();
      seen.push(event.event_id);
    });
    const envelope = testEvents.signatureRequestSigned({ seq: 3 });
    const { headers, body } = await signer.sign(envelope);
    expect((await receiver.receive({ method: 'POST', headers, body })).status).toBe(200);
    expect(seen).toEqual([
      {
        event_id: envelope.event_id,
        seq: 3,
        event: 'kyb.signature_request.signed',
        signature: envelope.data['signature'],
      },
      envelope.event_id,
    ]);
  });
});
