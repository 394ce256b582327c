// Step 2 of the pipeline (docs/architecture.md §3.2, spec 5.7): the receiver hands the signature check the exact bytes it received,
// and step 3 parses those same bytes. The test kit serializes with JSON.stringify, whose output survives a
// re-serialization unchanged, so only bodies written otherwise tell "the bytes received" apart from "the JSON they
// hold": a fault that MACs JSON.stringify(JSON.parse(body)) passed every other example test (issue 26).
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, testEvents, type TestSigner } from '../../test-kit.js';
import { platformCrypto as nodeCrypto } from '../verify/crypto/node.js';
import { platformCrypto as webCrypto } from '../verify/crypto/web.js';
import type { PlatformCrypto } from '../verify/crypto/types.js';
import { createReceiver } from '../receiver.js';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW, secrets: { '1': 'exact-bytes-secret' } });
});

/**
 * A refusal as a sender may write it: spaces and newlines, the seq written `3.0`, the reason with a \u escape.
 * JSON.stringify(JSON.parse(raw)) is another string (compact, `3`, `declined`) holding the same JSON.
 */
function unusualBody(): { raw: string; reserialized: string; eventId: string } {
  const envelope = testEvents.dataRequestRefused({ seq: 3, data: { reason: 'declined' } });
  const raw = JSON.stringify(envelope, null, 2)
    .replace('"seq": 3,', '"seq": 3.0,')
    .replace('"reason": "declined"', String.raw`"reason": "d\u0065clined"`);
  const reserialized = JSON.stringify(JSON.parse(raw));
  return { raw, reserialized, eventId: envelope.event_id };
}

describe.each<[string, PlatformCrypto]>([
  ['node:crypto', nodeCrypto],
  ['Web Crypto', webCrypto],
])('the HMAC covers the exact bytes received, never a re-serialization (%s)', (_name, crypto) => {
  function setup() {
    const receiver = createReceiver({ secrets: { '1': 'exact-bytes-secret' }, now: () => NOW, crypto });
    const reasons: string[] = [];
    receiver.on('kyb.data_request.refused', (event) => void reasons.push(event.data.reason));
    return { receiver, reasons };
  }

  it('the body differs from its re-serialization (the premise of the two tests below)', () => {
    const { raw, reserialized } = unusualBody();
    expect(raw).toContain('"seq": 3.0,');
    expect(raw).toContain(String.raw`"reason": "d\u0065clined"`);
    expect(reserialized).not.toBe(raw);
    expect(JSON.parse(reserialized)).toEqual(JSON.parse(raw));
  });

  it('accepts a body MACed over its exact bytes, however they are written', async () => {
    const { receiver, reasons } = setup();
    const { raw, eventId } = unusualBody();
    const { headers, body } = signer.signBytes(raw, { eventId });
    expect(await receiver.receive({ method: 'POST', headers, body })).toMatchObject({ status: 200 });
    expect(reasons).toEqual(['declined']);
  });

  it('refuses a body whose MAC was computed over its re-serialization, not over the bytes sent', async () => {
    const { receiver, reasons } = setup();
    const { raw, reserialized, eventId } = unusualBody();
    const headers = {
      ...signer.signBytes(raw, { eventId }).headers,
      'service-kyb-signature': signer.hmacHeader(reserialized),
    };
    const result = await receiver.receive({ method: 'POST', headers, body: new TextEncoder().encode(raw) });
    expect(result).toMatchObject({ status: 401, code: 'signature_mismatch' });
    expect(reasons).toEqual([]);
  });
});
