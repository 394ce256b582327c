// Spec 5.7: the MAC is compared in constant time. Timing cannot be measured reliably in a unit test, so this file
// checks the mechanism instead: on the node:crypto path every comparison goes through timingSafeEqual (a spy on
// the real function), and on the Web path through crypto.subtle.verify, which compares in constant time.
import { createHmac } from 'node:crypto';
import * as nodeCryptoModule from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';

vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>();
  return { ...actual, timingSafeEqual: vi.fn(actual.timingSafeEqual) };
});

const { platformCrypto: nodePath } = await import('./node.js');
const { platformCrypto: webPath } = await import('./web.js');

const secret = 'constant-time-secret';
const prefix = '1763812800.';
const body = new TextEncoder().encode('{"event":"kyb.test"}');
const rightMac = new Uint8Array(createHmac('sha256', secret).update(prefix).update(body).digest());
const wrongMac = rightMac.map((byte, index) => (index === 31 ? byte ^ 1 : byte));

afterEach(() => {
  vi.restoreAllMocks();
  vi.mocked(nodeCryptoModule.timingSafeEqual).mockClear();
});

describe('node:crypto path', () => {
  it.each<[string, Uint8Array, boolean]>([
    ['the right MAC', rightMac, true],
    ['a MAC one bit off', wrongMac, false],
  ])('compares %s with timingSafeEqual', async (_case, mac, expected) => {
    const prepared = await nodePath.importHmacSecret(secret);
    expect(nodePath.verifyHmac(prepared, prefix, body, mac)).toBe(expected);
    expect(nodeCryptoModule.timingSafeEqual).toHaveBeenCalledOnce();
  });

  it('answers with what timingSafeEqual answered, not with another comparison', async () => {
    const prepared = await nodePath.importHmacSecret(secret);
    vi.mocked(nodeCryptoModule.timingSafeEqual).mockReturnValueOnce(false);
    expect(nodePath.verifyHmac(prepared, prefix, body, rightMac)).toBe(false);
  });
});

describe('Web Crypto path', () => {
  it.each<[string, Uint8Array, boolean]>([
    ['the right MAC', rightMac, true],
    ['a MAC one bit off', wrongMac, false],
  ])('checks %s with crypto.subtle.verify', async (_case, mac, expected) => {
    const verify = vi.spyOn(crypto.subtle, 'verify');
    const prepared = await webPath.importHmacSecret(secret);
    expect(await webPath.verifyHmac(prepared, prefix, body, mac)).toBe(expected);
    expect(verify).toHaveBeenCalledOnce();
    expect(verify.mock.calls[0]![0]).toBe('HMAC');
  });
});
