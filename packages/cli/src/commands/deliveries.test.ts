import { startKybService, type KybService } from '@kyb-webhooks/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CLI_TEST_TIMEOUT_MS, freePort, runCli, startMerchant, type Merchant } from '../e2e-support.js';
import type { DeliverySummary } from './deliveries.js';

vi.setConfig({ testTimeout: CLI_TEST_TIMEOUT_MS });

// `deliveries` end to end, and what every API command shares: configuration from env or flags (the flag wins),
// usage errors that name what to set, API errors with the client's code, status and fix, and a key never printed.
let service: KybService;
let merchant: Merchant;
let requestId: string;

beforeAll(async () => {
  // Retries 60 ms, 120 ms … apart: time to end the merchant's outage between two attempts.
  service = await startKybService({ timeScale: 1e-3 });
  merchant = await startMerchant(service);
  requestId = await service.createDataRequest();
  await service.idle();
  // The release is answered 503 twice (the merchant's outage), then acknowledged at the service's third attempt.
  merchant.outage.down = true;
  await service.release(requestId);
  while (service.attempts(requestId).filter((attempt) => attempt.seq === 1).length < 2)
    await new Promise((resolve) => setTimeout(resolve, 5));
  merchant.outage.down = false;
  await service.idle();
});

afterAll(async () => {
  await merchant?.stop();
  await service?.stop();
});

function expectKeyNotPrinted(run: { stdout: string; stderr: string }, key = service.apiKey) {
  expect(run.stdout + run.stderr).not.toContain(key);
}

describe('deliveries', () => {
  it('--json: one row per event with its attempts, the last answer and whether it was acknowledged', async () => {
    const run = await runCli(['deliveries', requestId, '--json'], { env: merchant.env });
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout) as { events: DeliverySummary[]; unacknowledged: number; entries: unknown[] };
    const attempts = service.attempts(requestId);
    expect(result.events).toEqual([
      {
        seq: 0,
        event_id: attempts[0]!.eventId,
        event: 'kyb.data_request.pending_approval',
        attempts: 1,
        last_status: 200,
        last_error: null,
        acknowledged: true,
      },
      {
        seq: 1,
        event_id: attempts[1]!.eventId,
        event: 'kyb.data_request.released',
        attempts: attempts.filter((attempt) => attempt.seq === 1).length,
        last_status: 200,
        last_error: null,
        acknowledged: true,
      },
    ]);
    expect(result.events[1]!.attempts).toBeGreaterThanOrEqual(3);
    expect(result.unacknowledged).toBe(0);
    expect(result.entries).toHaveLength(attempts.length);
    expectKeyNotPrinted(run);
  });

  it('the table says every logged event was acknowledged', async () => {
    const run = await runCli(['deliveries', requestId], { env: merchant.env });
    expect(run.code).toBe(0);
    expect(run.stdout.split('\n')[0]!.split(/\s{2,}/)).toEqual([
      'seq',
      'event',
      'event_id',
      'attempts',
      'last status',
      'acknowledged',
    ]);
    expect(run.stdout).toContain('\u2713 every logged event was acknowledged (2).');
  });
});

describe('configuration and errors of the API commands', () => {
  it('a flag wins over the environment; the key went to the API and was never printed', async () => {
    const before = service.apiCalls.length;
    const run = await runCli(['deliveries', requestId, '--api-key', service.apiKey, '--base-url', service.baseUrl], {
      env: { ...merchant.env, KYB_API_KEY: 'kyb_wrong_key_from_env', KYB_BASE_URL: 'http://127.0.0.1:9' },
    });
    expect(run.code).toBe(0);
    expect(service.apiCalls.slice(before).every((call) => call.authorized)).toBe(true);
    expectKeyNotPrinted(run);
  });

  it('401: exit 1 with the client code, the status and the fix, never the key', async () => {
    const wrongKey = 'kyb_live_not_the_right_one_0123456789';
    const before = service.apiCalls.length;
    for (const args of [['deliveries', requestId], ['deliveries', requestId, '--json'], ['reactivate']]) {
      const run = await runCli(args, { env: { ...merchant.env, KYB_API_KEY: wrongKey } });
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain('KYB API error unauthorized (HTTP 401)');
      expect(run.stderr).toContain('fix: check KYB_API_KEY (or --api-key)');
      expectKeyNotPrinted(run, wrongKey);
    }
    // The service saw the (wrong) key and said so.
    expect(service.apiCalls.slice(before).map((call) => [call.status, call.authorized])).toContainEqual([401, false]);
  });

  it('an unknown request, an unreachable API: exit 1 with the code and what to check', async () => {
    const unknown = await runCli(['deliveries', 'dr_nope'], { env: merchant.env });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('KYB API error request_not_found (HTTP 404)');
    expect(unknown.stderr).toContain('give the request id');
    const down = await runCli(['events', requestId], {
      env: { ...merchant.env, KYB_BASE_URL: `http://127.0.0.1:${await freePort()}` },
    });
    expect(down.code).toBe(1);
    expect(down.stderr).toContain('KYB API error network_error (no HTTP answer)');
    expect(down.stderr).toContain('is KYB_BASE_URL (or --base-url)');
    expectKeyNotPrinted(down);
  });

  it('missing key or URL, or a URL the client refuses: exit 2 naming the variable and the flag, nothing sent', async () => {
    const before = service.apiCalls.length;
    const missing = await runCli(['deliveries', requestId], { env: { KYB_API_KEY: '', KYB_BASE_URL: '' } });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('set KYB_API_KEY (or pass --api-key)');
    expect(missing.stderr).toContain('set KYB_BASE_URL (or pass --base-url)');
    const insecure = await runCli(['deliveries', requestId, '--base-url', 'http://api.kyb.example.com'], {
      env: merchant.env,
    });
    expect(insecure.code).toBe(2);
    expect(insecure.stderr).toContain('(the address comes from --base-url or KYB_BASE_URL)');
    expectKeyNotPrinted(insecure);
    expect(service.apiCalls.length).toBe(before);
  });
});
