import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { KybWebhookError } from '../errors.js';
import { createSignatureVerifier, type SecretKeyring } from './signature.js';

// createSignatureVerifier used on its own (not through createReceiver, whose option checks come first): the keyring
// it refuses at creation, the length of t, and the clock offset that the detail of a stale or early signature gives.

const NOW = Date.UTC(2026, 10, 23, 8, 30, 0);
const T = Math.floor(NOW / 1000);
const SECRET = 'signature-checks-secret';
const body = new TextEncoder().encode('{"event":"kyb.test"}');

/** An independent oracle for the header: node:crypto, from the spec's definition. */
function header(t: number | string, kv = '3'): string {
  const mac = createHmac('sha256', SECRET).update(`${t}.`).update(body).digest('hex');
  return `t=${t},v1=${mac},kv=${kv}`;
}

function refusal(run: () => unknown): KybWebhookError | undefined {
  try {
    run();
  } catch (error) {
    if (error instanceof KybWebhookError) return error;
    throw error;
  }
  return undefined;
}

async function rejectionOf(promise: Promise<unknown>): Promise<KybWebhookError | undefined> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof KybWebhookError) return error;
    throw error;
  }
  return undefined;
}

const verifier = (secrets: SecretKeyring = { '3': SECRET }) =>
  createSignatureVerifier({ secrets, toleranceSeconds: 300, now: () => NOW });

describe('createSignatureVerifier refuses a keyring it cannot use, at creation', () => {
  it('an empty secret', () => {
    const error = refusal(() => verifier({ '3': '' }));
    expect({ code: error?.code, message: error?.message }).toEqual({
      code: 'config_invalid',
      message: 'The secret of version "3" is empty; set it from the dashboard.',
    });
  });

  it('a version that cannot appear as the kv of a header', () => {
    const error = refusal(() => verifier({ 'v 3': SECRET }));
    expect(error?.code).toBe('config_invalid');
    expect(error?.message).toContain('(it is the kv of the header)');
  });

  it('a notAfter given as a string, which is never parsed', () => {
    const error = refusal(() => verifier({ '3': { secret: SECRET, notAfter: '2030-01-01T00:00:00Z' as never } }));
    expect(error?.code).toBe('config_invalid');
  });
});

describe('t is at most 15 digits', () => {
  it('refuses 16 digits as malformed', async () => {
    expect((await rejectionOf(verifier()(header('1'.repeat(16)), body)))?.code).toBe('signature_malformed');
  });

  it('reads 15 digits as a time (far in the future here)', async () => {
    expect((await rejectionOf(verifier()(header('1'.repeat(15)), body)))?.code).toBe('signature_future');
  });
});

describe('the detail of a stale or early signature says by how much the clocks differ', () => {
  it('t 301 s old', async () => {
    const error = await rejectionOf(verifier()(header(T - 301), body));
    expect({ code: error?.code, detail: error?.detail }).toEqual({
      code: 'signature_expired',
      detail: 't is 301 s old',
    });
  });

  it('t 301 s ahead', async () => {
    const error = await rejectionOf(verifier()(header(T + 301), body));
    expect({ code: error?.code, detail: error?.detail }).toEqual({
      code: 'signature_future',
      detail: 't is 301 s ahead',
    });
  });
});

// Every comparison with NaN is false: a `now` that answers no number (one without return) passed the skew and the
// notAfter checks, so a correctly MACed header from 1970 under an ended version was accepted.
describe('a clock that answers no number refuses the delivery with internal_error (500, retried)', () => {
  it.each<[string, unknown]>([
    ['undefined', undefined],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
  ])('a clock that answers %s, for a 1970 header under an ended version', async (_case, reading) => {
    let clock: unknown = NOW;
    const verify = createSignatureVerifier({
      secrets: { '2': { secret: SECRET, notAfter: NOW + 1 }, '3': 'current' },
      toleranceSeconds: 300,
      now: () => clock as number,
    });
    clock = reading;
    const error = await rejectionOf(verify(header(1, '2'), body));
    expect({ code: error?.code, detail: error?.detail }).toEqual({
      code: 'internal_error',
      detail: expect.stringMatching(/^the clock \(now\) answered /),
    });
  });
});
