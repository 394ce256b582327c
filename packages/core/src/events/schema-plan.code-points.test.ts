// zod counts string lengths in code points: a surrogate pair is one, a lone surrogate (high or low) is one on its own.
// The plans the receiver validates with count the same way, so a delivery zod would refuse is never accepted by the
// plan alone. Lone surrogates reach a receiver through JSON escapes ("\ud800"), which JSON.parse keeps as they are.
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createTestSigner, testEvents, type TestSigner } from '../../test-kit.js';
import { createReceiver } from '../receiver.js';
import { envelopeSchema } from './envelope.js';
import { compileSchemaGuard, createValidator } from './schema-guard.js';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW, secrets: { '1': 'code-point-secret' } });
});

/** 501 code points in 501 UTF-16 units: a lone high surrogate, then 250 times a letter and a lone low surrogate. */
const LONE_SURROGATES_501 = '\uD800' + 'a\uDC00'.repeat(250);
/** 500 code points in 750 units: 250 letters and 250 surrogate pairs. */
const PAIRS_500 = 'a\uD83D\uDE00'.repeat(250);

async function answerFor(streamId: string) {
  const receiver = createReceiver({ secrets: { '1': 'code-point-secret' }, now: () => NOW });
  const ran: string[] = [];
  receiver.onAny((event) => void ran.push(event.stream_id));
  const { headers, body } = await signer.sign(testEvents.dataRequestRefused({ stream_id: streamId }), {
    attest: false,
  });
  const result = await receiver.receive({ method: 'POST', headers, body });
  return { status: result.status, code: result.code, ran: ran.length };
}

describe('stream_id: at most 500 characters, counted in code points as zod counts them', () => {
  it('zod refuses the lone surrogates (501 code points) and accepts the pairs (500)', () => {
    expect(LONE_SURROGATES_501).toHaveLength(501);
    expect(envelopeSchema.shape.stream_id.safeParse(LONE_SURROGATES_501).success).toBe(false);
    expect(envelopeSchema.shape.stream_id.safeParse(PAIRS_500).success).toBe(true);
  });

  it('refuses a delivery whose stream_id has 501 code points, lone low surrogates after letters included', async () => {
    expect(await answerFor(LONE_SURROGATES_501)).toEqual({ status: 400, code: 'envelope_invalid', ran: 0 });
  });

  it('accepts a delivery whose stream_id has 500 code points in 750 UTF-16 units', async () => {
    expect(await answerFor(PAIRS_500)).toEqual({ status: 200, code: undefined, ran: 1 });
  });
});

describe('string length checks of a compiled guard agree with zod on surrogates', () => {
  const values = [
    '\uD800a\uDC00', // three lone surrogates and letters: 3 code points
    'a\uDC00', // a low surrogate after a letter: 2
    '\uDC00\uD800', // low then high: 2
    '\uD83D\uDE00', // one pair: 1
    'a\uD83D\uDE00', // 2
    '\uD800\uD800\uDC00', // a lone high, then a pair: 2
    '\uD800',
    '',
  ];

  it.each([
    ['max(2)', z.string().max(2)],
    ['min(3)', z.string().min(3)],
    ['min(2).max(2)', z.string().min(2).max(2)],
  ])('z.string().%s', (_, schema) => {
    const guard = compileSchemaGuard(schema)!;
    const validate = createValidator(schema);
    for (const value of values) {
      const accepted = schema.safeParse(value).success;
      expect({ value, guard: guard(value) }).toEqual({ value, guard: accepted });
      expect({ value, validated: validate(value).success }).toEqual({ value, validated: accepted });
    }
  });
});
