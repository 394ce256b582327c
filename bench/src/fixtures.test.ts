import { describe, expect, it } from 'vitest';
import { BENCH_NOW_MS, benchEvent, createBenchSigner, signPool } from './fixtures.js';

const dataOf = (body: Uint8Array) =>
  (JSON.parse(new TextDecoder().decode(body)) as { data: Record<string, unknown> }).data;

describe('the bench fixtures', () => {
  it('give each event its own expires_at or released_at, a second apart, on the bench clock', () => {
    expect(benchEvent('hmac').timestamp).toBe(BENCH_NOW_MS / 1000);
    expect(Date.parse(benchEvent('hmac', 3).data['expires_at'] as string)).toBe(
      Date.parse(benchEvent('hmac', 0).data['expires_at'] as string) + 3000,
    );
    expect(Date.parse(benchEvent('attested', 3).data['released_at'] as string)).toBe(
      Date.parse(benchEvent('attested', 0).data['released_at'] as string) - 3000,
    );
  });

  it('sign pools whose deliveries carry distinct date-times and the same padded size', async () => {
    const signer = await createBenchSigner();
    for (const [kind, field] of [
      ['hmac', 'expires_at'],
      ['attested', 'released_at'],
    ] as const) {
      const pool = await signPool(signer, kind, 40, 1024);
      expect(new Set(pool.map((delivery) => dataOf(delivery.body)[field])).size).toBe(40);
      // An attested event is larger than 1 KB unpadded, so it is left as it is: the same size for all.
      expect(new Set(pool.map((delivery) => delivery.body.byteLength)).size).toBe(1);
    }
  });
});
