import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { platformCrypto as nodeCrypto } from './crypto/node.js';
import { platformCrypto as webCrypto } from './crypto/web.js';
import { KybWebhookError } from '../errors.js';
import { createSignatureVerifier, parseSignatureHeader } from './signature.js';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
const T = Math.floor(NOW / 1000);
const body = new TextEncoder().encode('{"event":"kyb.test","emoji":"✓"}');

// An independent oracle: node:crypto, straight from the spec's definition.
function header(secret: string, t: number | string, kv: string, bytes: Uint8Array = body): string {
  const mac = createHmac('sha256', secret).update(`${t}.`).update(bytes).digest('hex');
  return `t=${t},v1=${mac},kv=${kv}`;
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'ok';
  } catch (error) {
    if (error instanceof KybWebhookError) return error.code;
    throw error;
  }
}

describe.each([
  ['node:crypto', nodeCrypto],
  ['Web Crypto', webCrypto],
])('signature header (%s)', (_name, crypto) => {
  const verifier = (secrets: Parameters<typeof createSignatureVerifier>[0]['secrets'], now = NOW) =>
    createSignatureVerifier({ secrets, toleranceSeconds: 300, now: () => now, crypto });

  it('accepts the HMAC of "<t>." + the exact bytes and names the version', async () => {
    await expect(verifier({ '3': 's3cret' })(header('s3cret', T, '3'), body)).resolves.toEqual({
      version: '3',
      timestamp: T,
    });
  });

  it.each<[string, () => [string, Uint8Array]]>([
    ['a tampered body', () => [header('s3cret', T, '3'), new TextEncoder().encode('{"event":"kyb.test","emoji":"x"}')]],
    [
      'a re-serialization of the signed JSON',
      () => [
        header('s3cret', T, '3'),
        new TextEncoder().encode(JSON.stringify(JSON.parse(new TextDecoder().decode(body)), null, 1)),
      ],
    ],
    ['a MAC made with another secret', () => [header('other', T, '3'), body]],
  ])('rejects %s as signature_mismatch', async (_case, delivery) => {
    const [sent, bytes] = delivery();
    expect(await codeOf(verifier({ '3': 's3cret' })(sent, bytes))).toBe('signature_mismatch');
  });

  // Bytes that JSON.stringify(JSON.parse(…)) would write otherwise (spaces, 1.0, a \u escape): a check that MACs the
  // JSON rather than the bytes refuses the first and accepts the second (issue 26; checks.test.ts for the receiver).
  const unusual = new TextEncoder().encode(String.raw`{ "event" : "kyb.test", "seq": 1.0, "name": "caf\u00e9" }`);
  const reserialized = new TextEncoder().encode(JSON.stringify(JSON.parse(new TextDecoder().decode(unusual))));

  it('accepts the MAC of the exact bytes of a body written unlike its re-serialization', async () => {
    expect(await codeOf(verifier({ '3': 's3cret' })(header('s3cret', T, '3', unusual), unusual))).toBe('ok');
  });

  it('rejects, for those bytes, a MAC computed over their re-serialization', async () => {
    expect(new TextDecoder().decode(reserialized)).toBe('{"event":"kyb.test","seq":1,"name":"café"}');
    expect(await codeOf(verifier({ '3': 's3cret' })(header('s3cret', T, '3', reserialized), unusual))).toBe(
      'signature_mismatch',
    );
  });

  it('rejects a MAC computed with another timestamp than the one sent', async () => {
    const forged = header('s3cret', T - 1000, '3').replace(`t=${T - 1000}`, `t=${T}`);
    expect(await codeOf(verifier({ '3': 's3cret' })(forged, body))).toBe('signature_mismatch');
  });

  it('checks the MAC over t exactly as sent, leading zeros included', async () => {
    expect(await codeOf(verifier({ '3': 's3cret' })(header('s3cret', `0${T}`, '3'), body))).toBe('ok');
  });

  it('rejects a leading zero added to t after the MAC was computed', async () => {
    const mismatched = header('s3cret', T, '3').replace(`t=${T}`, `t=0${T}`);
    expect(await codeOf(verifier({ '3': 's3cret' })(mismatched, body))).toBe('signature_mismatch');
  });

  // Spec 5.7 / 8: 5 minutes of skew both ways, and no more.
  it.each<[string, number, string]>([
    ['t 300 s in the past', T - 300, 'ok'],
    ['t 300 s in the future', T + 300, 'ok'],
    ['t 301 s in the past', T - 301, 'signature_expired'],
    ['t 301 s in the future', T + 301, 'signature_future'],
  ])('answers %s with %s', async (_case, t, code) => {
    expect(await codeOf(verifier({ '3': 's3cret' })(header('s3cret', t, '3'), body))).toBe(code);
  });

  it.each<[string, string, string, string]>([
    ['the old secret under kv=2', 'old', '2', 'ok'],
    ['the new secret under kv=3', 'new', '3', 'ok'],
    ['the old secret under kv=3', 'old', '3', 'signature_mismatch'],
    ['an unknown kv=4', 'new', '4', 'signature_unknown_version'],
  ])('uses the secret named by kv, and only that one: %s gives %s', async (_case, secret, kv, code) => {
    expect(await codeOf(verifier({ '2': 'old', '3': 'new' })(header(secret, T, kv), body))).toBe(code);
  });

  describe('rotation overlap (spec 5.7, 8: 24 hours)', () => {
    const notAfter = NOW + 24 * 3600_000;
    const secrets = { '2': { secret: 'old', notAfter }, '3': 'new' };
    it.each<[string, number, string, string, number, string]>([
      ['the old version during the overlap', NOW, 'old', '2', T, 'ok'],
      ['the old version at notAfter', notAfter, 'old', '2', T + 86400, 'ok'],
      ['the old version 1 ms after notAfter', notAfter + 1, 'old', '2', T + 86400, 'signature_version_expired'],
      ['the new version after notAfter', notAfter + 1, 'new', '3', T + 86400, 'ok'],
    ])('answers %s with %s', async (_case, now, secret, kv, t, code) => {
      expect(await codeOf(verifier(secrets, now)(header(secret, t, kv), body))).toBe(code);
    });

    it('takes a Date as notAfter', async () => {
      // With the current version beside it: a keyring whose every version has ended is refused at creation.
      const dated = { '2': { secret: 'old', notAfter: new Date(NOW - 1) }, '3': 'new' };
      expect(await codeOf(verifier(dated)(header('old', T, '2'), body))).toBe('signature_version_expired');
    });
  });

  it.each<[string, string | undefined]>([
    ['an absent header', undefined],
    ['a blank header', '  '],
  ])('rejects %s as signature_missing', async (_case, value) => {
    expect(await codeOf(verifier({ '3': 's3cret' })(value, body))).toBe('signature_missing');
  });
});

describe('signature header grammar', () => {
  const mac = 'ab'.repeat(32);
  it.each([
    ['no kv', `t=1,v1=${mac}`],
    ['no t', `v1=${mac},kv=1`],
    ['no v1', 't=1,kv=1'],
    ['t not an integer', `t=1.5,v1=${mac},kv=1`],
    ['negative t', `t=-1,v1=${mac},kv=1`],
    ['short v1', `t=1,v1=${mac.slice(2)},kv=1`],
    ['v1 not hex', `t=1,v1=${'zz'.repeat(32)},kv=1`],
    ['t twice', `t=1,t=2,v1=${mac},kv=1`],
    ['v1 twice', `t=1,v1=${mac},v1=${mac},kv=1`],
    ['spaces', `t=1, v1=${mac}, kv=1`],
    ['empty field', `t=1,,v1=${mac},kv=1`],
    ['no equals', `t=1,v1,kv=1`],
    ['garbage', 'Bearer abc'],
    ['joined repeated headers', `t=1,v1=${mac},kv=1, t=1,v1=${mac},kv=1`],
    ['an empty value', `t=,v1=${mac},kv=1`],
    ['an empty key', `=1,t=1,v1=${mac},kv=1`],
    ['a trailing comma', `t=1,v1=${mac},kv=1,`],
    ['an unknown field whose value holds =', `t=1,v1=${mac},kv=1,x=a=b`],
    ['an unknown field whose value holds a space', `t=1,v1=${mac},kv=1,x=a b`],
    ['t of 16 digits', `t=${'1'.repeat(16)},v1=${mac},kv=1`],
    ['t with a letter after the digits', `t=12a,v1=${mac},kv=1`],
    ['t with a character just below 0', `t=1/,v1=${mac},kv=1`],
    ['v1 with one non-hex character', `t=1,v1=${mac.slice(0, 63)}g,kv=1`],
    ['v1 with a non-ASCII character', `t=1,v1=${mac.slice(0, 63)}\u00e9,kv=1`],
  ])('rejects %s as signature_malformed', (_case, value) => {
    expect(() => parseSignatureHeader(value)).toThrowError(expect.objectContaining({ code: 'signature_malformed' }));
  });

  it.each<[string, string, number]>([
    ['t of 15 digits', `t=${'9'.repeat(15)},v1=${mac},kv=3`, 999_999_999_999_999],
    ['t with leading zeros', `t=0017,v1=${mac},kv=3`, 17],
    ['upper-case hex in v1', `t=17,v1=${mac.toUpperCase()},kv=3`, 17],
  ])('parses %s', (_case, value, timestamp) => {
    expect(parseSignatureHeader(value)).toMatchObject({ timestamp, version: '3' });
  });

  it('ignores unknown keys so a future scheme does not break receivers', () => {
    expect(parseSignatureHeader(`t=17,v1=${mac},kv=3,v2=xyz`)).toMatchObject({ timestamp: 17, version: '3' });
  });

  it.each<[string, Record<string, string>, RegExp]>([
    ['a bad secret version name', { 'v 1': 'x' }, /kv/],
    ['an empty secret', { '1': '' }, /empty/],
  ])('rejects %s at start-up', (_case, secrets, message) => {
    expect(() => createSignatureVerifier({ toleranceSeconds: 300, now: Date.now, secrets })).toThrowError(message);
  });

  it('never puts the secret or the MAC into an error', async () => {
    const verify = createSignatureVerifier({ secrets: { '3': 'sup3r-s3cret' }, toleranceSeconds: 300, now: () => NOW });
    const sent = header('wrong', T, '3');
    try {
      await verify(sent, body);
      expect.unreachable();
    } catch (error) {
      const text = JSON.stringify({ ...(error as KybWebhookError), message: (error as Error).message });
      expect(text).not.toContain('sup3r-s3cret');
      expect(text).not.toContain(sent.split('v1=')[1]!.slice(0, 64));
    }
  });
});
