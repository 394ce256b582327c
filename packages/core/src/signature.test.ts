import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { platformCrypto as nodeCrypto } from './crypto/node.js';
import { platformCrypto as webCrypto } from './crypto/web.js';
import { KybWebhookError } from './errors.js';
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
    await expect(verifier({ '3': 's3cret' })(header('s3cret', T, '3'), body)).resolves.toEqual({ version: '3', timestamp: T });
  });

  it('rejects a tampered body, a re-serialization and a wrong secret as signature_mismatch', async () => {
    const verify = verifier({ '3': 's3cret' });
    const tampered = new TextEncoder().encode('{"event":"kyb.test","emoji":"x"}');
    const reserialized = new TextEncoder().encode(JSON.stringify(JSON.parse(new TextDecoder().decode(body)), null, 1));
    expect(await codeOf(verify(header('s3cret', T, '3'), tampered))).toBe('signature_mismatch');
    expect(await codeOf(verify(header('s3cret', T, '3'), reserialized))).toBe('signature_mismatch');
    expect(await codeOf(verify(header('other', T, '3'), body))).toBe('signature_mismatch');
  });

  it('rejects a MAC computed with another timestamp than the one sent', async () => {
    const forged = header('s3cret', T - 1000, '3').replace(`t=${T - 1000}`, `t=${T}`);
    expect(await codeOf(verifier({ '3': 's3cret' })(forged, body))).toBe('signature_mismatch');
  });

  it('checks the MAC over t exactly as sent, leading zeros included', async () => {
    const verify = verifier({ '3': 's3cret' });
    expect(await codeOf(verify(header('s3cret', `0${T}`, '3'), body))).toBe('ok');
    const mismatched = header('s3cret', T, '3').replace(`t=${T}`, `t=0${T}`);
    expect(await codeOf(verify(mismatched, body))).toBe('signature_mismatch');
  });

  it('allows 5 minutes of skew both ways and no more', async () => {
    const verify = verifier({ '3': 's3cret' });
    expect(await codeOf(verify(header('s3cret', T - 300, '3'), body))).toBe('ok');
    expect(await codeOf(verify(header('s3cret', T + 300, '3'), body))).toBe('ok');
    expect(await codeOf(verify(header('s3cret', T - 301, '3'), body))).toBe('signature_expired');
    expect(await codeOf(verify(header('s3cret', T + 301, '3'), body))).toBe('signature_future');
  });

  it('uses the secret named by kv, and only that one', async () => {
    const verify = verifier({ '2': 'old', '3': 'new' });
    expect(await codeOf(verify(header('old', T, '2'), body))).toBe('ok');
    expect(await codeOf(verify(header('new', T, '3'), body))).toBe('ok');
    expect(await codeOf(verify(header('old', T, '3'), body))).toBe('signature_mismatch');
    expect(await codeOf(verify(header('new', T, '4'), body))).toBe('signature_unknown_version');
  });

  it('accepts both versions during the rotation overlap and refuses the old one after notAfter', async () => {
    const notAfter = NOW + 24 * 3600_000;
    const secrets = { '2': { secret: 'old', notAfter }, '3': 'new' };
    expect(await codeOf(verifier(secrets, NOW)(header('old', T, '2'), body))).toBe('ok');
    expect(await codeOf(verifier(secrets, notAfter)(header('old', T + 86400, '2'), body))).toBe('ok');
    expect(await codeOf(verifier(secrets, notAfter + 1)(header('old', T + 86400, '2'), body))).toBe('signature_version_expired');
    expect(await codeOf(verifier(secrets, notAfter + 1)(header('new', T + 86400, '3'), body))).toBe('ok');
    expect(await codeOf(verifier({ '2': { secret: 'old', notAfter: new Date(NOW - 1) } })(header('old', T, '2'), body))).toBe(
      'signature_version_expired',
    );
  });

  it('rejects a missing header as signature_missing', async () => {
    expect(await codeOf(verifier({ '3': 's3cret' })(undefined, body))).toBe('signature_missing');
    expect(await codeOf(verifier({ '3': 's3cret' })('  ', body))).toBe('signature_missing');
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
  ])('rejects %s as signature_malformed', (_case, value) => {
    expect(() => parseSignatureHeader(value)).toThrowError(expect.objectContaining({ code: 'signature_malformed' }));
  });

  it('ignores unknown keys so a future scheme does not break receivers', () => {
    expect(parseSignatureHeader(`t=17,v1=${mac},kv=3,v2=xyz`)).toMatchObject({ timestamp: 17, version: '3' });
  });

  it('rejects a bad secret version name or an empty secret at start-up', () => {
    const options = { toleranceSeconds: 300, now: Date.now };
    expect(() => createSignatureVerifier({ ...options, secrets: { 'v 1': 'x' } })).toThrowError(/kv/);
    expect(() => createSignatureVerifier({ ...options, secrets: { '1': '' } })).toThrowError(/empty/);
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
