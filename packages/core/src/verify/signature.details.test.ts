// Spec 5.7 through the signature check on its own: which field a malformed header got wrong (the logger's detail),
// the exact grammar of kv and of the keys a future scheme may add, what the keyring accepts at creation, and the
// synchronous answer on node:crypto once the secret is imported (docs/architecture.md §3.2).
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { KybWebhookError } from '../errors.js';
import { platformCrypto as nodeCrypto } from './crypto/node.js';
import {
  createSignatureCheck,
  createSignatureVerifier,
  parseSignatureHeader,
  type SecretKeyring,
} from './signature.js';

const NOW = Date.UTC(2026, 10, 23, 8, 30, 0);
const T = Math.floor(NOW / 1000);
const SECRET = 'signature-details-secret';
const body = new TextEncoder().encode('{"event":"kyb.test"}');
const mac = 'ab'.repeat(32);

/** An independent oracle for the header: node:crypto, from the spec's definition. */
function header(kv = '3', secret = SECRET): string {
  const hex = createHmac('sha256', secret).update(`${T}.`).update(body).digest('hex');
  return `t=${T},v1=${hex},kv=${kv}`;
}

/** The code and detail `run` threw, or `ok` with what it returned. */
function answerOf(run: () => unknown): { code: string; detail?: string | undefined } {
  try {
    run();
    return { code: 'ok' };
  } catch (error) {
    if (error instanceof KybWebhookError) return { code: error.code, detail: error.detail };
    throw error;
  }
}

async function asyncAnswerOf(promise: Promise<unknown>): Promise<{ code: string; detail?: string | undefined }> {
  try {
    await promise;
    return { code: 'ok' };
  } catch (error) {
    if (error instanceof KybWebhookError) return { code: error.code, detail: error.detail };
    throw error;
  }
}

const verifier = (secrets: SecretKeyring = { '3': SECRET }, now = NOW) =>
  createSignatureVerifier({ secrets, toleranceSeconds: 300, now: () => now, crypto: nodeCrypto });

describe('a malformed header says which field is wrong', () => {
  it.each<[string, string, string]>([
    ['no equals sign', `t=1,v1,kv=1`, 'a field is not key=value'],
    // No '=' anywhere after the field's start: the field must not be read as a key ending one character early.
    ['a last field without an equals sign', `v1=${mac},kv=1,tx`, 'a field is not key=value'],
    ['a header of one field without an equals sign', 'tx', 'a field is not key=value'],
    ['t twice', `t=1,t=2,v1=${mac},kv=1`, 'field t appears twice'],
    ['v1 twice', `t=1,v1=${mac},v1=${mac},kv=1`, 'field v1 appears twice'],
    ['kv twice', `t=1,v1=${mac},kv=1,kv=2`, 'field kv appears twice'],
    ['no t', `v1=${mac},kv=1`, 't is missing or not an integer'],
    // ':' is the character just after '9'.
    ['t with a colon', `t=12:,v1=${mac},kv=1`, 't is missing or not an integer'],
    ['no v1', `t=1,kv=1`, 'v1 is missing or not 64 hex digits'],
    ['v1 of 66 hex digits', `t=1,v1=${mac}ab,kv=1`, 'v1 is missing or not 64 hex digits'],
    ['no kv', `t=1,v1=${mac}`, 'kv is missing or malformed'],
    ['kv of 65 characters', `t=1,v1=${mac},kv=${'k'.repeat(65)}`, 'kv is missing or malformed'],
    ['kv with a slash', `t=1,v1=${mac},kv=a/b`, 'kv is missing or malformed'],
    ['kv starting with a character outside its set', `t=1,v1=${mac},kv=!a`, 'kv is missing or malformed'],
    ['kv ending with a character outside its set', `t=1,v1=${mac},kv=a!`, 'kv is missing or malformed'],
    ['an unknown key in upper case', `t=1,v1=${mac},kv=1,V2=x`, 'a field is not key=value'],
    ['an unknown key starting with a digit', `t=1,v1=${mac},kv=1,2v=x`, 'a field is not key=value'],
    ['an unknown key ending with an underscore', `t=1,v1=${mac},kv=1,v_=x`, 'a field is not key=value'],
    ['an unknown key with a dash inside', `t=1,v1=${mac},kv=1,v-2=x`, 'a field is not key=value'],
  ])('%s', (_case, value, detail) => {
    expect(answerOf(() => parseSignatureHeader(value))).toEqual({ code: 'signature_malformed', detail });
  });

  it.each<[string, string, string]>([
    ['a kv of 64 characters', `t=1,v1=${mac},kv=${'k'.repeat(64)}`, 'k'.repeat(64)],
    ['a kv of every character class', `t=1,v1=${mac},kv=A.z_0-9`, 'A.z_0-9'],
    ['an unknown key of letters and digits', `t=1,v1=${mac},kv=7,v2x9=anything`, '7'],
  ])('accepts %s', (_case, value, version) => {
    expect(parseSignatureHeader(value)).toMatchObject({ timestamp: 1, version });
  });
});

describe('the detail of a refused signature names the version, never the secret', () => {
  it.each<[string, () => Promise<unknown>, { code: string; detail: string }]>([
    [
      'an unknown version',
      () => verifier()(header('9'), body),
      { code: 'signature_unknown_version', detail: 'kv=9 is not configured' },
    ],
    [
      'a version past its notAfter',
      () => verifier({ '3': { secret: SECRET, notAfter: NOW - 1 }, '4': 'current' })(header(), body),
      { code: 'signature_version_expired', detail: 'kv=3 ended' },
    ],
    [
      'a MAC of another secret',
      () => verifier()(header('3', 'other'), body),
      { code: 'signature_mismatch', detail: 'kv=3' },
    ],
  ])('%s', async (_case, run, expected) => {
    expect(await asyncAnswerOf(run())).toEqual(expected);
  });
});

describe('the keyring at creation', () => {
  it.each<[string, SecretKeyring]>([
    ['a version of 65 characters', { ['k'.repeat(65)]: SECRET }],
    ['a version with a slash', { 'a/b': SECRET }],
  ])('refuses %s (it could never be a kv)', (_case, secrets) => {
    expect(answerOf(() => verifier(secrets)).code).toBe('config_invalid');
  });

  it('refuses a secret that is not a string', () => {
    const error = answerOf(() => verifier({ '3': { secret: 42 as unknown as string } }));
    expect(error.code).toBe('config_invalid');
  });

  it.each<[string, string]>([
    ['64 characters', 'k'.repeat(64)],
    ['every character class', 'A.z_0-9'],
  ])('verifies under a version of %s', async (_case, version) => {
    expect(await verifier({ [version]: SECRET })(header(version), body)).toEqual({ version, timestamp: T });
  });
});

describe('createSignatureCheck on node:crypto', () => {
  const check = () =>
    createSignatureCheck({ secrets: { '3': SECRET }, toleranceSeconds: 300, now: () => NOW, crypto: nodeCrypto });

  it('answers with a Promise while the secret is being imported', async () => {
    const answer = check()(header(), body);
    expect(answer).toBeInstanceOf(Promise);
    expect(await answer).toEqual({ version: '3', timestamp: T });
  });

  it('answers synchronously once the secret is imported, so a delivery pays no microtask', async () => {
    const verify = check();
    await new Promise((resolve) => setTimeout(resolve, 10));
    const answer = verify(header(), body);
    expect(answer).not.toBeInstanceOf(Promise);
    expect(answer).toEqual({ version: '3', timestamp: T });
    expect(answerOf(() => verify(header('3', 'other'), body))).toEqual({ code: 'signature_mismatch', detail: 'kv=3' });
  });
});

describe('node:crypto primitives', () => {
  it('answers false, without throwing, for an expected MAC of another length', async () => {
    const secret = await nodeCrypto.importHmacSecret(SECRET);
    const right = createHmac('sha256', SECRET).update('1.').update(body).digest();
    expect(nodeCrypto.verifyHmac(secret, '1.', body, new Uint8Array(right))).toBe(true);
    expect(nodeCrypto.verifyHmac(secret, '1.', body, new Uint8Array(right.subarray(0, 31)))).toBe(false);
  });

  it('decodes UTF-8 from a plain Uint8Array view at an offset, not only from a Buffer', () => {
    const bytes = new TextEncoder().encode(' {"name":"café"}');
    expect(nodeCrypto.decodeUtf8(bytes.subarray(1))).toBe('{"name":"café"}');
    expect(() => nodeCrypto.decodeUtf8(new Uint8Array([0x7b, 0xff, 0x7d]))).toThrow(new TypeError('Not valid UTF-8.'));
  });
});

describe('a secret the platform cannot import', () => {
  it('is refused on first use with the import error, never as an unhandled rejection at start-up', async () => {
    const failure = new Error('import failed');
    const failing = { ...nodeCrypto, importHmacSecret: () => Promise.reject(failure) };
    const verify = createSignatureCheck({
      secrets: { '3': SECRET },
      toleranceSeconds: 300,
      now: () => NOW,
      crypto: failing,
    });
    // Let the import settle before the first delivery: an unhandled rejection would fail this test file.
    await new Promise((resolve) => setTimeout(resolve, 10));
    await expect(verify(header(), body)).rejects.toBe(failure);
  });
});
