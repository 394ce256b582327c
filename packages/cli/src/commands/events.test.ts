import { startKybService, type KybService } from '@kyb-webhooks/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CLI_TEST_TIMEOUT_MS, runCli, startMerchant, type Merchant } from '../e2e-support.js';

vi.setConfig({ testTimeout: CLI_TEST_TIMEOUT_MS });

// `events` end to end against the local KYB service (two pages of events, to show paging is followed).
let service: KybService;
let merchant: Merchant;
let requestId: string;

beforeAll(async () => {
  service = await startKybService({ timeScale: 1e-5, eventsPageLimit: 2 });
  merchant = await startMerchant(service);
  requestId = await service.createDataRequest();
  await service.emit(requestId, 'kyb.data_request.pending_approval', { request_id: requestId });
  await service.release(requestId);
  await service.idle();
});

afterAll(async () => {
  await merchant?.stop();
  await service?.stop();
});

describe('events', () => {
  it('a table of seq, event_id, type, created (every page)', async () => {
    const run = await runCli(['events', requestId], { env: merchant.env });
    expect(run.code).toBe(0);
    const events = service.request(requestId)!.events;
    const rows = run.stdout
      .trimEnd()
      .split('\n')
      .map((line) => line.split(/\s{2,}/));
    expect(rows[0]).toEqual(['seq', 'event_id', 'type', 'created', 'attested']);
    expect(rows.slice(2)).toEqual(
      events.map((event) => [
        String(event.seq),
        event.event_id,
        event.event,
        new Date(event.timestamp * 1000).toISOString(),
        event.attestation === undefined ? 'no' : 'yes',
      ]),
    );
    expect(run.stdout + run.stderr).not.toContain(service.apiKey);
  });

  it('--after-seq N asks the API for the events after N; --json leaves the attestation (the answers) out', async () => {
    const before = service.apiCalls.length;
    const run = await runCli(['events', requestId, '--after-seq', '1', '--json'], { env: merchant.env });
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout) as { after_seq: number; events: Record<string, unknown>[] };
    expect(result.after_seq).toBe(1);
    expect(result.events.map((event) => [event.seq, event.event, event.attested])).toEqual([
      [2, 'kyb.data_request.released', true],
    ]);
    expect(result.events[0]).not.toHaveProperty('attestation');
    expect(run.stdout).not.toContain(service.request(requestId)!.events[2]!.attestation!);
    expect(service.apiCalls[before]?.path).toBe(`/api/v1/kyb/data-requests/${requestId}/events?after_seq=1`);
  });

  it('--after-seq must be an integer: exit 2', async () => {
    const run = await runCli(['events', requestId, '--after-seq', 'x'], { env: merchant.env });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("option '--after-seq <n>' argument 'x' is invalid");
  });
});
