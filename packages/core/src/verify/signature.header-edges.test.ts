// The edges of Service-KYB-Signature parsing (issue 11, mutation survivors): a field with an empty value and a v1
// with a non-hex character in either nibble are malformed headers, never a MAC that might still match.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, testEvents, type TestSigner } from '../../test-kit.js';
import { createReceiver } from '../receiver.js';
import { parseSignatureHeader } from './signature.js';

const HEADER = 'service-kyb-signature';
let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ secrets: { '1': 'endpoint-secret' } });
});

/**
 * Delivers a genuinely signed event with its signature header rewritten by `rewrite`; returns the answer's code, or
 * its status when it has none. A rewrite that answers undefined cannot apply to this MAC: another event is signed.
 */
async function deliverRewritten(rewrite: (header: string) => string | undefined): Promise<string | number> {
  const receiver = createReceiver({ secrets: { '1': 'endpoint-secret' } });
  for (let attempt = 0; attempt < 100; attempt++) {
    const { headers, body } = await signer.sign(testEvents.dataRequestRefused());
    const rewritten = rewrite((headers as Record<string, string>)[HEADER]!);
    if (rewritten === undefined) continue;
    const result = await receiver.receive({ method: 'POST', headers: { ...headers, [HEADER]: rewritten }, body });
    return result.code ?? result.status;
  }
  throw new Error('no signed event suited the rewrite in 100 attempts');
}

/** The header with the v1 digit at the first even (or odd) index holding '1' replaced, or undefined when none does. */
function replaceDigitOne(header: string, parity: 0 | 1, replacement: string): string | undefined {
  const mac = /v1=([0-9a-f]{64})/.exec(header)![1]!;
  for (let i = parity; i < mac.length; i += 2) {
    if (mac[i] === '1') return header.replace(mac, `${mac.slice(0, i)}${replacement}${mac.slice(i + 1)}`);
  }
  return undefined;
}

describe('Service-KYB-Signature fields', () => {
  it('refuses an unknown field with an empty value as signature_malformed', async () => {
    expect(await deliverRewritten((header) => `${header},foo=`)).toBe('signature_malformed');
  });

  it('accepts an unknown field with a value (the control case)', async () => {
    expect(await deliverRewritten((header) => `${header},foo=bar`)).toBe(200);
  });
});

describe('v1 digits', () => {
  it.each<[string, 0 | 1, string]>([
    ["a 'g' as the high nibble of a byte", 0, 'g'],
    ["a 'g' as the low nibble of a byte", 1, 'g'],
    // Characters past ASCII fall outside the digit table; they must not be read as a digit of any value.
    ["an 'é' where the high nibble is 1", 0, 'é'],
    ["an 'é' where the low nibble is 1", 1, 'é'],
  ])('refuses %s as signature_malformed', async (_case, parity, replacement) => {
    expect(await deliverRewritten((header) => replaceDigitOne(header, parity, replacement))).toBe(
      'signature_malformed',
    );
  });

  it('parses upper-case hex digits to the same bytes as lower-case', () => {
    const lower = parseSignatureHeader(`t=1,v1=${'0a'.repeat(32)},kv=1`).mac;
    const upper = parseSignatureHeader(`t=1,v1=${'0A'.repeat(32)},kv=1`).mac;
    expect(upper).toEqual(lower);
  });
});
