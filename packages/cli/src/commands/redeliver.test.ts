import { startKybService, type KybService } from '@kyb-webhooks/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CLI_TEST_TIMEOUT_MS, runCli, startMerchant, type Merchant } from '../e2e-support.js';

vi.setConfig({ testTimeout: CLI_TEST_TIMEOUT_MS });

// `redeliver` end to end: the service queues the stream again and delivers it; the receiver answers duplicate.
let service: KybService;
let merchant: Merchant;

beforeAll(async () => {
  service = await startKybService({ timeScale: 1e-5 });
  merchant = await startMerchant(service);
});

afterAll(async () => {
  await merchant?.stop();
  await service?.stop();
});

describe('redeliver', () => {
  it('queues every event of the request again; the service delivers them in order, answered duplicate', async () => {
    const requestId = await service.createDataRequest();
    await service.release(requestId);
    await service.idle();
    const before = service.attempts(requestId).length;
    const run = await runCli(['redeliver', requestId], { env: merchant.env });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`\u2713 ${requestId}: 2 events queued again`);
    await service.idle();
    const again = service.attempts(requestId).slice(before);
    expect(again.map((attempt) => [attempt.seq, attempt.status, attempt.responseCode])).toEqual([
      [0, 200, 'duplicate'],
      [1, 200, 'duplicate'],
    ]);
    expect(merchant.handled.filter((event) => event.streamId === requestId)).toHaveLength(2);

    const json = await runCli(['redeliver', requestId, '--json'], { env: merchant.env });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ request_id: requestId, queued: 2 });
    expect(run.stdout + run.stderr + json.stdout + json.stderr).not.toContain(service.apiKey);
    expect(service.apiCalls.filter((call) => call.method === 'POST').map((call) => call.path)).toEqual([
      `/api/v1/kyb/data-requests/${requestId}/redeliver`,
      `/api/v1/kyb/data-requests/${requestId}/redeliver`,
    ]);
  });

  it('has no --after-seq (the spec shows none for redeliver): exit 2', async () => {
    const run = await runCli(['redeliver', 'dr_1', '--after-seq', '3'], { env: merchant.env });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("unknown option '--after-seq'");
  });
});
