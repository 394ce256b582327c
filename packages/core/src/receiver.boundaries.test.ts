// Exact boundaries and single checks that planted faults (mutation testing) once survived with every other test
// green: each case here pins one comparison or one branch, so moving a limit by one or dropping one check fails
// exactly one named test.
import { Readable } from 'node:stream';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestSigner, testEvents, type SignOptions, type TestEnvelope, type TestSigner } from '../test-kit.js';
import { readBodyStream, readWebBodyStream } from './http/body.js';
import { platformCrypto as nodeCrypto } from './verify/crypto/node.js';
import { platformCrypto as webCrypto } from './verify/crypto/web.js';
import type { PlatformCrypto } from './verify/crypto/types.js';
import { createReceiver, type ReceiverOptions } from './receiver.js';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
const NOW_S = NOW / 1000;
const LEEWAY = 30;
let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW, secrets: { '3': 'boundary-secret-v3' } });
});

describe.each<[string, PlatformCrypto]>([
  ['node:crypto', nodeCrypto],
  ['Web Crypto', webCrypto],
])('receiver boundaries (%s)', (_name, crypto) => {
  function setup(overrides: Partial<ReceiverOptions> = {}) {
    const receiver = createReceiver({
      secrets: { '3': 'boundary-secret-v3' },
      attestation: { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks, leewaySeconds: LEEWAY },
      now: () => NOW,
      crypto,
      ...overrides,
    });
    const deliver = async (envelope: TestEnvelope, options?: SignOptions) => {
      const { headers, body } = await signer.sign(envelope, options);
      return receiver.receive({ method: 'POST', headers, body });
    };
    return { receiver, deliver };
  }

  describe('attestation relabel checks (spec 5.5.5), one claim at a time', () => {
    it('rejects a token whose stream_id claim names another stream while its request_id matches the envelope', async () => {
      const { receiver, deliver } = setup();
      const handler = vi.fn();
      receiver.onAny(handler);
      const envelope = testEvents.businessWalletAddressChanged();
      const result = await deliver(envelope, { claims: { stream_id: 'biz_another_stream' } });
      expect(result).toMatchObject({ status: 401, code: 'attestation_relabelled' });
      expect(handler).not.toHaveBeenCalled();
    });

    it('rejects a token whose request_id claim names another stream while its stream_id matches the envelope', async () => {
      // wallet_address_changed carries no data.request_id, so only the request_id claim check can catch this.
      const { receiver, deliver } = setup();
      const handler = vi.fn();
      receiver.onAny(handler);
      const envelope = testEvents.businessWalletAddressChanged();
      const result = await deliver(envelope, { claims: { request_id: 'biz_another_stream' } });
      expect(result).toMatchObject({ status: 401, code: 'attestation_relabelled' });
      expect(handler).not.toHaveBeenCalled();
    });

    it('accepts the same wallet change attested with matching stream_id and request_id', async () => {
      const { deliver } = setup();
      expect(await deliver(testEvents.businessWalletAddressChanged())).toMatchObject({ status: 200 });
    });
  });

  describe(`attestation exp and iat at the edge of the ${LEEWAY} s leeway (spec 5.5.4)`, () => {
    it.each<[string, number, Record<string, unknown>]>([
      ['exp = now − leeway', 401, { exp: NOW_S - LEEWAY }],
      ['exp = now − leeway + 1', 200, { exp: NOW_S - LEEWAY + 1 }],
      ['iat = now + leeway', 200, { iat: NOW_S + LEEWAY }],
      ['iat = now + leeway + 1', 401, { iat: NOW_S + LEEWAY + 1 }],
    ])('answers a release with %s with %i', async (_case, status, claims) => {
      const { deliver } = setup();
      const result = await deliver(testEvents.dataRequestReleased(), { claims });
      expect(result.status).toBe(status);
      if (status === 401) expect(result.code).toBe('attestation_invalid');
    });
  });

  describe('the signature timestamp comes from the header, never from the body (spec 5.7)', () => {
    it('accepts a fresh t on a body whose timestamp is a day old', async () => {
      const { deliver } = setup();
      expect((await deliver(testEvents.dataRequestPendingApproval({ timestamp: NOW_S - 86_400 }))).status).toBe(200);
    });

    it('refuses a stale t on a body whose timestamp is now', async () => {
      const { deliver } = setup();
      const result = await deliver(testEvents.dataRequestPendingApproval({ timestamp: NOW_S }), {
        timestamp: NOW_S - 301,
      });
      expect(result).toMatchObject({ status: 401, code: 'signature_expired' });
    });
  });

  describe('dedupe on event_id only (spec 6)', () => {
    it('answers a redelivery with another t, timestamp and body bytes as a duplicate, and runs the handler once', async () => {
      const { receiver, deliver } = setup();
      const handler = vi.fn();
      receiver.on('kyb.data_request.pending_approval', handler);
      const envelope = testEvents.dataRequestPendingApproval({ timestamp: NOW_S - 60 });
      expect((await deliver(envelope)).status).toBe(200);
      const redelivery = await deliver({ ...envelope, timestamp: NOW_S }, { timestamp: NOW_S - 10, attempt: 2 });
      expect(redelivery).toMatchObject({ status: 200, code: 'duplicate' });
      expect(handler).toHaveBeenCalledOnce();
    });
  });

  describe('body size limit (receiver)', () => {
    it('accepts a body of exactly maxBodyBytes', async () => {
      const signed = await signer.sign(testEvents.dataRequestPendingApproval());
      const { receiver } = setup({ maxBodyBytes: signed.body.byteLength });
      expect((await receiver.receive({ method: 'POST', headers: signed.headers, body: signed.body })).status).toBe(200);
    });

    it('answers 413 for a body one byte over maxBodyBytes', async () => {
      const signed = await signer.sign(testEvents.dataRequestPendingApproval());
      const { receiver } = setup({ maxBodyBytes: signed.body.byteLength - 1 });
      expect(await receiver.receive({ method: 'POST', headers: signed.headers, body: signed.body })).toMatchObject({
        status: 413,
        code: 'body_too_large',
      });
    });
  });
});

describe('event_id length (spec 2.3, 8: 26 characters)', () => {
  const receiver = () => createReceiver({ secrets: { '3': 'boundary-secret-v3' }, now: () => NOW });
  const ULID = '01KAPZ3C9QW8E7R6T5Y4X3X2X1';

  it.each<[string, number, string]>([
    ['25 characters', 400, ULID.slice(0, 25)],
    ['26 characters', 200, ULID],
    ['27 characters', 400, `${ULID}X`],
  ])('answers an event_id of %s with %i', async (_case, status, eventId) => {
    const envelope = testEvents.dataRequestPendingApproval({ event_id: eventId });
    const signed = signer.signBytes(JSON.stringify(envelope));
    const result = await receiver().receive({ method: 'POST', headers: signed.headers, body: signed.body });
    expect(result.status).toBe(status);
    if (status === 400) expect(result.code).toBe('envelope_invalid');
  });
});

describe('onUnknown (spec 6, 9.2: only types this version does not know)', () => {
  function deliverTo(
    register: (receiver: ReturnType<typeof createReceiver>) => void,
    envelope: TestEnvelope,
    options?: SignOptions,
  ) {
    const receiver = createReceiver({
      secrets: { '3': 'boundary-secret-v3' },
      attestation: { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
      now: () => NOW,
    });
    register(receiver);
    return signer
      .sign(envelope, options)
      .then(({ headers, body }) => receiver.receive({ method: 'POST', headers, body }));
  }

  it('does not run onUnknown for a known type that has a handler', async () => {
    const unknown = vi.fn();
    const typed = vi.fn();
    const result = await deliverTo(
      (r) => r.on('kyb.data_request.refused', typed).onUnknown(unknown),
      testEvents.dataRequestRefused(),
    );
    expect(result.status).toBe(200);
    expect(typed).toHaveBeenCalledOnce();
    expect(unknown).not.toHaveBeenCalled();
  });

  it('does not run onUnknown for a known type without a handler', async () => {
    const unknown = vi.fn();
    const result = await deliverTo((r) => r.onUnknown(unknown), testEvents.dataRequestPendingApproval());
    expect(result.status).toBe(200);
    expect(unknown).not.toHaveBeenCalled();
  });

  it('runs onUnknown once for an attested type this version does not know', async () => {
    const unknown = vi.fn();
    const envelope: TestEnvelope = {
      ...testEvents.dataRequestRefused(),
      event: 'kyb.business.sanctions_flagged',
      data: { level: 'high' },
    };
    const result = await deliverTo((r) => r.onUnknown(unknown), envelope, { attest: true });
    expect(result.status).toBe(200);
    expect(unknown).toHaveBeenCalledOnce();
    expect(unknown.mock.calls[0]![0]).toMatchObject({
      event: 'kyb.business.sanctions_flagged',
      event_id: envelope.event_id,
    });
  });
});

describe('body size limit (stream readers used by the adapters)', () => {
  const bytes = (length: number) => new Uint8Array(length).fill(0x61);
  const nodeStream = (chunks: Uint8Array[]) => Readable.from(chunks.map((chunk) => Buffer.from(chunk)));
  const webStream = (chunks: Uint8Array[]) =>
    new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(chunk);
        controller.close();
      },
    });

  it('readBodyStream accepts a body of exactly maxBytes, in two chunks', async () => {
    const read = await readBodyStream(nodeStream([bytes(60), bytes(40)]), { maxBytes: 100 });
    expect(read.ok).toBe(true);
    expect(read.ok && read.body.byteLength).toBe(100);
  });

  it('readBodyStream hands back exactly the bytes sent, across chunks', async () => {
    const read = await readBodyStream(nodeStream([Uint8Array.of(1, 2, 3), Uint8Array.of(4, 5)]), { maxBytes: 100 });
    expect(read).toEqual({ ok: true, body: Uint8Array.of(1, 2, 3, 4, 5) });
  });

  it('readBodyStream hands back exactly the bytes of a single chunk', async () => {
    const read = await readBodyStream(nodeStream([Uint8Array.of(7, 8, 9)]), { maxBytes: 100 });
    expect(read.ok && [...read.body]).toEqual([7, 8, 9]);
  });

  it('readBodyStream encodes string chunks (a stream with an encoding set) as UTF-8', async () => {
    const read = await readBodyStream(Readable.from(['{"a":"é', '"}'], { objectMode: true }), { maxBytes: 100 });
    expect(read.ok && new TextDecoder().decode(read.body)).toBe('{"a":"é"}');
  });

  it('readBodyStream answers an empty body as zero bytes', async () => {
    const read = await readBodyStream(nodeStream([]), { maxBytes: 100 });
    expect(read).toEqual({ ok: true, body: new Uint8Array(0) });
  });

  it('readWebBodyStream hands back exactly the bytes sent, across chunks', async () => {
    const read = await readWebBodyStream(webStream([Uint8Array.of(1, 2, 3), Uint8Array.of(4, 5)]), { maxBytes: 100 });
    expect(read).toEqual({ ok: true, body: Uint8Array.of(1, 2, 3, 4, 5) });
  });

  it('readBodyStream refuses a body of maxBytes + 1', async () => {
    expect(await readBodyStream(nodeStream([bytes(60), bytes(41)]), { maxBytes: 100 })).toEqual({
      ok: false,
      code: 'body_too_large',
    });
  });

  it('readBodyStream accepts a declared Content-Length of exactly maxBytes', async () => {
    const read = await readBodyStream(nodeStream([bytes(100)]), { maxBytes: 100, declaredLength: '100' });
    expect(read.ok).toBe(true);
  });

  it('readBodyStream refuses a declared Content-Length of maxBytes + 1 before reading', async () => {
    expect(await readBodyStream(nodeStream([]), { maxBytes: 100, declaredLength: '101' })).toEqual({
      ok: false,
      code: 'body_too_large',
    });
  });

  it('readWebBodyStream accepts a body of exactly maxBytes, in two chunks', async () => {
    const read = await readWebBodyStream(webStream([bytes(60), bytes(40)]), { maxBytes: 100 });
    expect(read.ok).toBe(true);
    expect(read.ok && read.body.byteLength).toBe(100);
  });

  it('readWebBodyStream accepts a declared Content-Length of exactly maxBytes', async () => {
    const read = await readWebBodyStream(webStream([bytes(100)]), { maxBytes: 100, declaredLength: '100' });
    expect(read.ok).toBe(true);
  });

  it('readWebBodyStream refuses a declared Content-Length of maxBytes + 1', async () => {
    expect(await readWebBodyStream(webStream([bytes(101)]), { maxBytes: 100, declaredLength: '101' })).toEqual({
      ok: false,
      code: 'body_too_large',
    });
  });

  it('readWebBodyStream refuses a body of maxBytes + 1', async () => {
    expect(await readWebBodyStream(webStream([bytes(60), bytes(41)]), { maxBytes: 100 })).toEqual({
      ok: false,
      code: 'body_too_large',
    });
  });
});
