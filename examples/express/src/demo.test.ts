import { describe, expect, it } from 'vitest';
import { listening, runDemo } from '@kyb-webhooks/example-shared';
import { createApp } from './app.js';

// The README's demo is a promise to users: these are the answers it must show.
describe.each(['memory', 'sqlite'] as const)('the demo scenario with the %s store', (store) => {
  it('shows every delivery with the status, code and handler outcome the README describes', async () => {
    const rows = await runDemo('Express', (receiver) => listening(createApp(receiver).listen(0, '127.0.0.1')), store, () => {});
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
});
