import { createTestSigner, testEvents } from '@kyb-webhooks/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { exampleReceiver } from './config.js';

// `npm run example -- <framework> --queue`: the receiver every example app's server.ts gets, in queue mode.
describe('exampleReceiver', () => {
  afterEach(() => vi.restoreAllMocks());

  it('with --queue: answers a signed delivery 200 queued, then the worker in the process runs its handler once', async () => {
    const lines: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((line: string) => void lines.push(line));
    const signer = await createTestSigner({ secrets: { '1': 'whsec_example_queue' } });
    const example = await exampleReceiver(['express', '--queue'], { KYB_SECRET_V1: 'whsec_example_queue' }, []);
    try {
      const envelope = testEvents.dataRequestRefused();
      const first = await example.receiver.receive({ method: 'POST', ...(await signer.sign(envelope)) });
      expect([first.status, first.code]).toEqual([200, 'queued']);
      await expect.poll(() => example.activity.get(envelope.event_id)).toMatch(/^marked request refused/);
      const again = await example.receiver.receive({
        method: 'POST',
        ...(await signer.sign(envelope, { attempt: 2 })),
      });
      expect([again.status, again.code]).toEqual([200, 'duplicate']);
      // The handler's line, once: the copy was answered by the queue and never run.
      const handled = () => lines.filter((line) => line.startsWith(`${envelope.event} ${envelope.event_id}:`));
      await expect
        .poll(handled)
        .toEqual([expect.stringMatching(/: marked request refused: .* \(worker: job 1, run 1\)$/)]);
      expect(lines).toContain(
        'The memory queue is NOT durable: jobs still waiting die with the process. For a durable queue: --queue=pgboss (DATABASE_URL) or --queue=bullmq (REDIS_URL).',
      );
    } finally {
      await example.close();
    }
  });

  it('without --queue: inline, the handler has run when the delivery is answered', async () => {
    vi.spyOn(console, 'log').mockImplementation(() => {});
    const signer = await createTestSigner({ secrets: { '1': 'whsec_example_inline' } });
    const example = await exampleReceiver(['express'], { KYB_SECRET_V1: 'whsec_example_inline' }, []);
    const envelope = testEvents.dataRequestRefused();
    const result = await example.receiver.receive({ method: 'POST', ...(await signer.sign(envelope)) });
    expect([result.status, result.code]).toEqual([200, undefined]);
    expect(example.activity.get(envelope.event_id)).toMatch(/^marked request refused/);
  });

  it('refuses --queue=pgboss without DATABASE_URL, naming the variable', async () => {
    await expect(exampleReceiver(['--queue=pgboss'], { KYB_SECRET_V1: 'whsec_x' }, [])).rejects.toThrow(
      'Set DATABASE_URL for this queue engine, e.g. DATABASE_URL=postgres://user:pass@127.0.0.1/app',
    );
  });
});
