import { startKybService, type KybService } from '@kyb-webhooks/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CLI_TEST_TIMEOUT_MS, runCli, startMerchant, type Merchant } from '../e2e-support.js';

vi.setConfig({ testTimeout: CLI_TEST_TIMEOUT_MS });

// `reactivate` end to end: a quarantined endpoint, cleared by the command; the service then delivers its backlog.
let service: KybService;
let merchant: Merchant;

beforeAll(async () => {
  service = await startKybService({ timeScale: 1e-5, quarantineAfter: 2 });
  merchant = await startMerchant(service);
});

afterAll(async () => {
  await merchant?.stop();
  await service?.stop();
});

describe('reactivate', () => {
  it('clears the quarantine; the held backlog is then delivered in order', async () => {
    merchant.outage.down = true;
    const requestId = await service.createDataRequest();
    await service.idle();
    expect(service.quarantined).toBe(true);
    await service.release(requestId);
    merchant.outage.down = false;

    const run = await runCli(['reactivate'], { env: merchant.env });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('\u2713 endpoint reactivated');
    await service.idle();
    expect(service.quarantined).toBe(false);
    expect(merchant.handled.map((event) => event.seq)).toEqual([0, 1]);

    const json = await runCli(['reactivate', '--json'], { env: merchant.env });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ reactivated: true });
    expect(run.stdout + run.stderr + json.stdout + json.stderr).not.toContain(service.apiKey);
    expect(service.apiCalls.map((call) => `${call.method} ${call.path} ${call.status} ${call.authorized}`)).toEqual([
      'POST /api/v1/kyb/webhook-endpoint/reactivate 200 true',
      'POST /api/v1/kyb/webhook-endpoint/reactivate 200 true',
    ]);
  });
});
