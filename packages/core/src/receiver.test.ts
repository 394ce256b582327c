import { beforeAll, describe, expect, expectTypeOf, it, vi } from 'vitest';
import {
  createTestSigner,
  refusedForEveryReason,
  testEvents,
  type SignOptions,
  type TestEnvelope,
  type TestSigner,
} from '../../testing/src/index.js';
import { platformCrypto as selectedCrypto } from '#crypto';
import { platformCrypto as nodeCrypto } from './crypto/node.js';
import { platformCrypto as webCrypto } from './crypto/web.js';
import type { PlatformCrypto } from './crypto/types.js';
import type { ClaimResult, DedupeStore } from './dedupe.js';
import type { LogEntry } from './logger.js';
import { createMemoryStore } from './memory-store.js';
import { createReceiver, type ReceiverOptions } from './receiver.js';
import type { AttestationClaims } from './attestation.js';
import type { ReleasedAnswers } from './answers.js';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
let signer: TestSigner;
let stranger: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW, secrets: { '2': 'old-secret-v2', '3': 'new-secret-v3' }, currentVersion: '3' });
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

  it('answers with frozen shared objects, so a hook that edits one answer cannot change the next one', async () => {
    const { receiver, deliver } = setup();
    const first = await deliver(testEvents.dataRequestPendingApproval());
    expect(() => {
      (first.body as { received: boolean }).received = false;
    }).toThrow(TypeError);
    expect(() => {
      first.headers['x-extra'] = '1';
    }).toThrow(TypeError);
    const second = await deliver(testEvents.dataRequestPendingApproval());
    expect(second).toMatchObject({ status: 200, headers: {}, body: { received: true } });
    const refused = await receiver.receive({ method: 'GET', headers: {}, body: '' });
    expect(() => {
      refused.headers['allow'] = 'GET';
    }).toThrow(TypeError);
    expect((await receiver.receive({ method: 'GET', headers: {}, body: '' })).headers).toEqual({ allow: 'POST' });
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
    expect(context).toMatchObject({ authentication: { hmac: { version: '3' }, attestation: false }, claims: undefined, deliveryAttempt: 2 });
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
    expect(results.filter((result) => result.status === 200 && result.code === 'duplicate').length + results.filter((result) => result.status === 409).length).toBe(99);
    expect(results.filter((result) => result.status === 409)[0]?.body).toEqual({ error: { code: 'in_progress', message: expect.any(String) } });
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
    const { receiver, deliver } = setup({ store, leaseMs: 1000 });
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

    it('accepts both versions during the overlap and refuses the old one after it', async () => {
      const { deliver } = setup();
      expect((await deliver(testEvents.dataRequestPendingApproval(), { version: '2' })).status).toBe(200);
      const later = setup({ now: () => NOW + 3600_001 });
      const old = await signer.sign(testEvents.dataRequestPendingApproval(), { version: '2', timestamp: Math.floor((NOW + 3600_001) / 1000) });
      expect(await later.receiver.receive({ headers: old.headers, body: old.body })).toMatchObject({ status: 401, code: 'signature_version_expired' });
    });

    it('rejects a tampered body, a missing and a malformed header', async () => {
      const { receiver } = setup();
      const signed = await signer.sign(testEvents.dataRequestPendingApproval());
      const tampered = new TextEncoder().encode(signed.text.replace('"EUR"', '"USD"'));
      expect((await receiver.receive({ headers: signed.headers, body: tampered })).code).toBe('signature_mismatch');
      const { 'service-kyb-signature': _removed, ...unsigned } = signed.headers;
      expect(await receiver.receive({ headers: unsigned, body: signed.body })).toMatchObject({ status: 401, code: 'signature_missing' });
      const malformed = { ...signed.headers, 'service-kyb-signature': 't=abc,v1=00,kv=3' };
      expect(await receiver.receive({ headers: malformed, body: signed.body })).toMatchObject({ status: 400, code: 'signature_malformed' });
    });

    it('reads headers from a Web Headers object and from mixed-case records', async () => {
      const { receiver } = setup();
      const signed = await signer.sign(testEvents.dataRequestPendingApproval());
      expect((await receiver.receive({ headers: new Headers(signed.headers), body: signed.body })).status).toBe(200);
      const mixed = Object.fromEntries(Object.entries(signed.headers).map(([key, value]) => [key.toUpperCase(), value]));
      const again = await signer.sign(testEvents.dataRequestPendingApproval());
      expect((await receiver.receive({ headers: { ...mixed, 'SERVICE-KYB-SIGNATURE': again.headers['service-kyb-signature'] }, body: again.body })).status).toBe(200);
    });
  });

  describe('limits, body and envelope', () => {
    it('answers 405, 413 and 415 with stable codes', async () => {
      const { receiver } = setup({ maxBodyBytes: 2048 });
      const signed = await signer.sign(testEvents.dataRequestPendingApproval());
      expect(await receiver.receive({ method: 'GET', headers: signed.headers, body: signed.body })).toMatchObject({ status: 405, code: 'method_not_allowed', headers: { allow: 'POST' } });
      const big = signer.signBytes(JSON.stringify({ pad: 'x'.repeat(4096) }));
      expect(await receiver.receive({ headers: big.headers, body: big.body })).toMatchObject({ status: 413, code: 'body_too_large' });
      const text = signer.signBytes(signed.text, { contentType: 'text/plain' });
      expect(await receiver.receive({ headers: text.headers, body: text.body })).toMatchObject({ status: 415, code: 'unsupported_media_type' });
      const charset = signer.signBytes(signed.text, { contentType: 'Application/JSON; charset=utf-8' });
      expect((await receiver.receive({ headers: charset.headers, body: charset.body })).status).toBe(200);
    });

    it('answers 400 body_not_json for invalid JSON and for non-UTF-8 bytes after checking their HMAC', async () => {
      const { receiver } = setup();
      const invalid = signer.signBytes('{"event":');
      expect(await receiver.receive({ headers: invalid.headers, body: invalid.body })).toMatchObject({ status: 400, code: 'body_not_json' });
      const latin1 = signer.signBytes(new Uint8Array([0x7b, 0x22, 0xe9, 0x22, 0x3a, 0x31, 0x7d]));
      expect(await receiver.receive({ headers: latin1.headers, body: latin1.body })).toMatchObject({ status: 400, code: 'body_not_json' });
      // The same bytes with a bad MAC are an authentication failure first.
      const forged = { ...latin1.headers, 'service-kyb-signature': signer.hmacHeader(latin1.body, { secret: 'forged' }) };
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
      expect(await receiver.receive({ headers: signed.headers, body: signed.body })).toMatchObject({ status: 400, code: 'envelope_invalid' });
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
      const envelope = { ...testEvents.dataRequestPendingApproval({ data: { expires_at: '2026-12-01T00:00:00Z', price: undefined, new_field: 1 } }), new_top: true };
      expect((await deliver(envelope)).status).toBe(200);
      expect(handler.mock.calls[0]![0]).toMatchObject({ new_top: true, data: { new_field: 1, expires_at: '2026-12-01T00:00:00Z' } });
      expect(handler.mock.calls[0]![0].data.price).toBeUndefined();
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

    it('delivers every refusal reason, and a reason this version does not know', async () => {
      const { receiver, deliver } = setup();
      const reasons: string[] = [];
      receiver.on('kyb.data_request.refused', (event) => {
        reasons.push(event.data.reason);
      });
      for (const envelope of refusedForEveryReason()) expect((await deliver(envelope)).status).toBe(200);
      expect((await deliver(testEvents.dataRequestRefused({ data: { reason: 'sanctions_hit' } }))).status).toBe(200);
      expect(reasons).toEqual(['declined', 'threshold_not_met', 'expired', 'business_not_verified', 'business_wallet_rotated', 'cancelled_by_merchant', 'unavailable', 'sanctions_hit']);
    });
  });

  describe('attestation', () => {
    it.each<[string, (envelope: TestEnvelope) => Promise<SignOptions>, string]>([
      ['missing on an attested type', async () => ({ attest: false }), 'attestation_missing'],
      ['a login token', async () => ({ attestation: await signer.loginToken() }), 'attestation_invalid_typ'],
      ['signed by an unknown key', async (envelope) => ({ attestation: await stranger.attest(envelope) }), 'attestation_invalid'],
      ['alg none', async (envelope) => ({ attestation: await signer.unsignedToken(envelope) }), 'attestation_invalid'],
      ['HS256 with the public key', async (envelope) => ({ attestation: await signer.hs256WithPublicKey(envelope) }), 'attestation_invalid'],
      ['expired', async () => ({ claims: { exp: NOW / 1000 - 120 } }), 'attestation_invalid'],
      ['for another audience', async () => ({ claims: { aud: 'someone-else' } }), 'attestation_invalid'],
      ['relabelled to another seq', async (envelope) => ({ claims: { seq: envelope.seq + 1 } }), 'attestation_relabelled'],
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
      const relabelled = { ...original, event_id: testEvents.businessWalletAddressChanged().event_id, attestation: token };
      expect(await deliver(relabelled)).toMatchObject({ status: 401, code: 'attestation_relabelled' });
    });

    it('verifies an attested event of a type it does not know and hands it to onUnknown', async () => {
      const { receiver, deliver } = setup();
      const unknown = vi.fn();
      const any = vi.fn();
      receiver.onUnknown(unknown).onAny(any);
      const envelope: TestEnvelope = { ...testEvents.dataRequestRefused(), event: 'kyb.business.sanctions_flagged', data: { level: 'high' } };
      expect((await deliver(envelope, { attest: true })).status).toBe(200);
      expect(unknown).toHaveBeenCalledOnce();
      expect(any).toHaveBeenCalledOnce();
      expect(unknown.mock.calls[0]![1]).toMatchObject({ authentication: { attestation: true }, claims: { event_id: envelope.event_id } });
      const relabelled = { ...envelope, event_id: testEvents.dataRequestRefused().event_id };
      const token = await signer.attest(envelope);
      expect(await deliver({ ...relabelled, attestation: token })).toMatchObject({ status: 401, code: 'attestation_relabelled' });
      expect((await deliver({ ...envelope, event_id: testEvents.dataRequestRefused().event_id }, { attestation: 'x.y.z' })).code).toBe('attestation_invalid');
    });

    it('verifies an attestation on a type the spec does not mark attested', async () => {
      const { deliver } = setup();
      const envelope = testEvents.signatureRequestSigned();
      expect((await deliver(envelope, { attestation: await stranger.attest(envelope) })).code).toBe('attestation_invalid');
      expect((await deliver(envelope, { attest: true })).status).toBe(200);
    });

    it('answers 500 attestation_not_configured rather than skip an attestation it cannot check', async () => {
      const { deliver } = setup({ attestation: undefined });
      expect(await deliver(testEvents.dataRequestReleased())).toMatchObject({ status: 500, code: 'attestation_not_configured' });
      expect((await deliver(testEvents.dataRequestPendingApproval())).status).toBe(200);
    });

    it('without secrets, flags events without attestation as unauthenticated and never lets them shadow a verified event', async () => {
      const { receiver, deliver } = setup({ secrets: undefined });
      const contexts: unknown[] = [];
      receiver.onAny((_event, context) => {
        contexts.push(context.authentication);
      });
      const released = testEvents.dataRequestReleased();
      // A forger reuses the event_id of a coming release on an unattested event.
      const forged = { ...testEvents.dataRequestPendingApproval(), event_id: released.event_id };
      expect((await deliver(forged)).status).toBe(200);
      expect((await deliver(released)).status).toBe(200);
      expect(contexts).toEqual([{ hmac: null, attestation: false }, { hmac: null, attestation: true }]);
    });
  });

  describe('store failures', () => {
    function failingStore(fail: 'claim' | 'complete' | 'release'): DedupeStore {
      const memory = createMemoryStore();
      return {
        claim: (id, options): Promise<ClaimResult> => (fail === 'claim' ? Promise.reject(new Error('ECONNREFUSED')) : memory.claim(id, options)),
        complete: (id, token, options) => (fail === 'complete' ? Promise.reject(new Error('ECONNRESET')) : memory.complete(id, token, options)),
        release: (id, token) => (fail === 'release' ? Promise.reject(new Error('ECONNRESET')) : memory.release(id, token)),
      };
    }

    it('answers 503 store_unavailable and runs no handler when the claim fails', async () => {
      const { receiver, deliver } = setup({ store: failingStore('claim') });
      const handler = vi.fn();
      receiver.onAny(handler);
      expect(await deliver(testEvents.dataRequestPendingApproval())).toMatchObject({ status: 503, code: 'store_unavailable' });
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

  it('never throws, and never logs a secret, a token or body content', async () => {
    const { receiver, deliver, logs } = setup({
      logger: (entry) => {
        logs.push(entry);
        throw new Error('logger broken');
      },
    });
    const marker = 'PII-Ada-Lovelace-4242';
    const envelope = testEvents.dataRequestReleased({ data: { note: marker } });
    const token = await signer.attest(envelope);
    const bad: SignOptions[] = [{ secret: 'forged' }, { claims: { seq: 99 } }, { attestation: await signer.loginToken() }, { header: { typ: 'JWT' } }, {}];
    for (const options of bad) await deliver(envelope, options);
    await receiver.receive({ headers: {}, body: marker });
    await receiver.receive({ headers: null as never, body: marker });
    const logged = JSON.stringify(logs, (_key, value) => (value instanceof Error ? { name: value.name, message: value.message } : value));
    expect(logs.length).toBeGreaterThan(5);
    for (const secret of ['old-secret-v2', 'new-secret-v3', marker, token.split('.')[2]!, 'Ada Lovelace']) expect(logged).not.toContain(secret);
  });
});

describe('createReceiver options', () => {
  it('refuses to start with neither secrets nor attestation', () => {
    expect(() => createReceiver({})).toThrowError(/secrets.*attestation/);
    expect(() => createReceiver({ secrets: {} })).toThrowError(expect.objectContaining({ code: 'config_invalid' }));
  });

  it('refuses nonsense limits', () => {
    expect(() => createReceiver({ secrets: { '1': 's' }, maxBodyBytes: 0 })).toThrowError(/maxBodyBytes/);
    expect(() => createReceiver({ secrets: { '1': 's' }, toleranceSeconds: Number.NaN })).toThrowError(/toleranceSeconds/);
  });
});

describe('handler types', () => {
  it('types envelope fields and data by event name', () => {
    const receiver = createReceiver({ secrets: { '1': 's' } });
    receiver.on('kyb.signature_request.signed', (event) => {
      expectTypeOf(event.event_id).toEqualTypeOf<string>();
      expectTypeOf(event.seq).toEqualTypeOf<number>();
      expectTypeOf(event.event).toEqualTypeOf<'kyb.signature_request.signed'>();
      expectTypeOf(event.data.signature).toEqualTypeOf<string>();
    });
    receiver.onAny((event) => {
      expectTypeOf(event.event_id).toEqualTypeOf<string>();
    });
  });
});
