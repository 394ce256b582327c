import { describe, expect, it } from 'vitest';
import { runDemo } from '@kyb-webhooks/example-shared';
import { serveApp } from './serve.js';

// The README's demo is a promise to users: these are the answers it must show.
describe.each(['memory', 'sqlite'] as const)('the demo scenario with the %s store', (store) => {
  it('shows every delivery with the status, code and handler outcome the README describes', async () => {
    const { rows } = await runDemo('Express', serveApp, store, () => {});
    expect(rows.map((row) => [row.step, row.status, row.code])).toEqual([
      ['data request pending approval', 200, '—'],
      ['released with attestation (two directors)', 200, '—'],
      ['same release redelivered', 200, 'duplicate'],
      ['forged HMAC', 401, 'signature_mismatch'],
      ['release relabelled to another event_id', 401, 'attestation_relabelled'],
      ['attested event of an unknown type', 200, '—'],
      ['another data request refused', 200, '—'],
      ['signature request signed', 200, '—'],
      ['same release after an app restart', 200, store === 'sqlite' ? 'duplicate' : '—'],
    ]);
    expect(rows[1]!.handler).toMatch(/directors: Jane Doe & Rahul Mehta/);
    expect(rows[2]!.handler).toBe('—');
    expect(rows[3]!.handler).toBe('—');
    expect(rows[8]!.handler).toBe(store === 'sqlite' ? '—' : rows[1]!.handler);
  });

  it('shows a gap backfilled and a quarantine recovered by recover(), every stream complete and in order', async () => {
    const { streams } = await runDemo('Express', serveApp, store, () => {});
    expect(streams.rows.map((row) => [row.step.trim(), row.status, row.code])).toEqual([
      ['wallet changed (seq 0)', 200, '—'],
      ['wallet changed (seq 1), app down', null, 'service gave up after 3 attempts'],
      ['wallet changed (seq 2), app back: a gap', null, 'seq 1 backfilled from the API'],
      ['then seq 2 itself', 200, '—'],
      [expect.stringMatching(/^app down: 3 requests, \d+ attempts fail$/), null, 'endpoint quarantined'],
      ['meanwhile released, refused, signed', null, '6 events queued'],
      ['app back: recover({ requestIds })', null, '6 events replayed'],
      ...Array.from({ length: 6 }, (_, index) => [
        expect.stringMatching(new RegExp(`^\\w\\w_…\\w{4} seq ${index % 2}$`)),
        null,
        'replayed',
      ]),
      ['then the reactivated backlog arrives', null, '6 deliveries, 6 duplicate'],
    ]);
    // The wallet changes ran in order: each replaced the address the one before it set.
    expect(streams.rows.slice(0, 4).map((row) => row.handler)).toEqual([
      'replaced wallet 0x1111aa… (no alias kept)',
      '—',
      'replaced wallet 0x2222bb… (no alias kept)',
      'replaced wallet 0x3333cc… (no alias kept)',
    ]);
    expect(streams.rows.slice(7, 13).every((row) => row.handler !== '—')).toBe(true);
    expect([streams.events, streams.streams, streams.inOrder]).toEqual([9, 4, true]);
  });
});
