import { startKybService, type KybService } from '@kyb-webhooks/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CLI_TEST_TIMEOUT_MS, runCli, runCliOnTerminalAsync, startMerchant, type Merchant } from '../e2e-support.js';

vi.setConfig({ testTimeout: CLI_TEST_TIMEOUT_MS });

// `recover` end to end: the CLI as a child process, the local KYB service (API, quarantine, backlog) and the
// merchant's real receiver on 127.0.0.1. Only the CLI's commands recover the endpoint.
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

interface RecoverJson {
  ok: boolean;
  to: string;
  secret_version: string;
  streams: {
    request_id: string;
    events: number;
    processed: number;
    duplicate: number;
    failed: number;
    held: number;
    last_seq: number | null;
    failures: { event_id: string; seq: number; status: number | null; code: string | null }[];
  }[];
  not_selected: string[];
  reactivated: boolean | { code: string };
}

/** Two requests delivered, then an outage during which both get another event: the endpoint is quarantined. */
async function quarantined(): Promise<{ service: KybService; merchant: Merchant; a: string; b: string }> {
  const service = await startKybService({ quarantineAfter: 3, timeScale: 1e-5 });
  cleanups.push(() => service.stop());
  const merchant = await startMerchant(service);
  cleanups.push(() => merchant.stop());
  const a = await service.createDataRequest();
  const b = await service.createDataRequest();
  await service.idle();
  merchant.outage.down = true;
  await service.release(a);
  await service.refuse(b, 'declined');
  await service.idle();
  expect(service.quarantined).toBe(true);
  merchant.outage.down = false;
  return { service, merchant, a, b };
}

const seqsOf = (merchant: Merchant, streamId: string) =>
  merchant.handled.filter((event) => event.streamId === streamId).map((event) => event.seq);

function expectNoSecrets(run: { stdout: string; stderr: string }, merchant: Merchant) {
  const printed = run.stdout + run.stderr;
  expect(printed).not.toContain(merchant.env.KYB_API_KEY);
  expect(printed).not.toContain(merchant.env.KYB_SECRET_V1);
}

describe('recover a quarantined endpoint with CLI commands only', () => {
  it('deliveries shows the unacknowledged event, recover replays both streams in order and reactivates, the backlog then arrives as duplicates', async () => {
    const { service, merchant, a, b } = await quarantined();

    const deliveries = await runCli(['deliveries', a], { env: merchant.env });
    expect(deliveries.code).toBe(0);
    const header = deliveries.stdout.split('\n')[0]!;
    expect(header.split(/\s{2,}/)).toEqual(['seq', 'event', 'event_id', 'attempts', 'last status', 'acknowledged']);
    const released = deliveries.stdout.split('\n').find((line) => line.includes('data_request.released'));
    expect(released?.split(/\s{2,}/)).toEqual([
      '1',
      'data_request.released',
      service.request(a)!.events[1]!.event_id,
      expect.stringMatching(/^\d+$/),
      '503',
      'no',
    ]);
    expect(deliveries.stdout).toContain(`recover them with kyb-webhooks recover --request ${a} --to`);

    const run = await runCli(['recover', '--request', a, '--request', b, '--to', merchant.url], { env: merchant.env });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const lines = run.stdout.split('\n');
    expect(lines[0]!.split(/\s{2,}/)).toEqual([
      'request',
      'events',
      'processed',
      'duplicate',
      'failed',
      'held',
      'last seq',
    ]);
    expect(lines[2]!.split(/\s{2,}/)).toEqual([a, '1', '1', '0', '0', '0', '1']);
    expect(lines[3]!.split(/\s{2,}/)).toEqual([b, '1', '1', '0', '0', '0', '1']);
    expect(run.stdout).toContain('\u2713 endpoint reactivated');
    expect(seqsOf(merchant, a)).toEqual([0, 1]);
    expect(seqsOf(merchant, b)).toEqual([0, 1]);

    // The service delivers its held backlog after the reactivation: every event answered duplicate, none run twice.
    await service.idle();
    expect(service.quarantined).toBe(false);
    expect(service.pending()).toBe(0);
    const afterReactivation = service.attempts().filter((attempt) => attempt.seq === 1 && attempt.status === 200);
    expect(afterReactivation.map((attempt) => attempt.responseCode)).toEqual(['duplicate', 'duplicate']);
    expect(seqsOf(merchant, a)).toEqual([0, 1]);
    expect(seqsOf(merchant, b)).toEqual([0, 1]);

    // The key went to the API on every call and was never printed.
    const calls = service.apiCalls.map((call) => `${call.method} ${call.path.split('?')[0]}`);
    expect(calls).toContain(`GET /api/v1/kyb/data-requests/${a}/events`);
    expect(calls).toContain('POST /api/v1/kyb/webhook-endpoint/reactivate');
    expect(service.apiCalls.every((call) => call.authorized)).toBe(true);
    expectNoSecrets(deliveries, merchant);
    expectNoSecrets(run, merchant);

    // Running it again is safe: the log now shows every event acknowledged, so nothing is left to replay.
    const again = await runCli(['recover', '--request', a, '--to', merchant.url, '--json'], { env: merchant.env });
    expect(again.code).toBe(0);
    const report = JSON.parse(again.stdout) as RecoverJson;
    expect(report).toMatchObject({ ok: true, reactivated: true });
    expect(report.streams[0]).toMatchObject({ request_id: a, events: 0, processed: 0, failed: 0 });
    expect(seqsOf(merchant, a)).toEqual([0, 1]);
  });

  it('exits 1 with the code the receiver answered, holds the later events of the stream, and --no-reactivate leaves the quarantine', async () => {
    const { service, merchant, a, b } = await quarantined();
    await service.emit(a, 'kyb.data_request.pending_approval', { request_id: a });
    await service.idle();
    const releasedId = service.request(a)!.events[1]!.event_id;
    merchant.failing.add(releasedId);

    const run = await runCli(
      ['recover', '--request', a, '--request', b, '--to', merchant.url, '--no-reactivate', '--json'],
      {
        env: merchant.env,
      },
    );
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as RecoverJson;
    expect(report.ok).toBe(false);
    expect(report.reactivated).toBe(false);
    expect(report.streams[0]).toMatchObject({
      request_id: a,
      events: 2,
      processed: 0,
      failed: 1,
      held: 1,
      last_seq: null,
      failures: [{ event_id: releasedId, seq: 1, status: 500, code: 'handler_failed' }],
    });
    expect(report.streams[1]).toMatchObject({ request_id: b, processed: 1, failed: 0, last_seq: 1 });
    // Seq 2 of a was held back: the receiver never got it before seq 1.
    expect(seqsOf(merchant, a)).toEqual([0]);
    expect(service.quarantined).toBe(true);
    expectNoSecrets(run, merchant);

    // The table says the same to a person, with the code and what to do.
    const text = await runCli(['recover', '--request', a, '--to', merchant.url, '--no-reactivate'], {
      env: merchant.env,
    });
    expect(text.code).toBe(1);
    expect(text.stdout).toContain(`\u2717 ${a} seq 1 (${releasedId}): your receiver answered 500 handler_failed`);
    expect(text.stdout).toContain('1 later events held back');
    expect(text.stdout).toContain('endpoint not reactivated (--no-reactivate)');

    // Fixed: the stream goes through, in order, and the endpoint is reactivated.
    merchant.failing.clear();
    const fixed = await runCli(['recover', '--request', a, '--to', merchant.url], { env: merchant.env });
    expect(fixed.code).toBe(0);
    expect(seqsOf(merchant, a)).toEqual([0, 1, 2]);
    await service.idle();
    expect(service.quarantined).toBe(false);
  });

  /** A request delivered, then an outage during which it is released and gets one more event. */
  async function releasedDuringOutage(service: KybService, merchant: Merchant): Promise<string> {
    const a = await service.createDataRequest();
    await service.idle();
    merchant.outage.down = true;
    await service.release(a);
    await service.emit(a, 'kyb.data_request.pending_approval', { request_id: a });
    await service.idle();
    merchant.outage.down = false;
    return a;
  }

  it('an attestation the endpoint refuses stops the stream there: exit 1, the later events held, never sent to probe', async () => {
    // The merchant's receiver expects another audience: it refuses the release (401 attestation_invalid) however
    // often it comes. The CLI cannot see whether the endpoint's own ordering would skip it, so it must not send seq 2
    // and read its 200 as a skip.
    const service = await startKybService({ quarantineAfter: 3, timeScale: 1e-5 });
    cleanups.push(() => service.stop());
    const merchant = await startMerchant({
      ...service,
      audience: 'another-audience',
      setEndpoint: (endpoint) => service.setEndpoint(endpoint),
    });
    cleanups.push(() => merchant.stop());
    const a = await releasedDuringOutage(service, merchant);

    const run = await runCli(['recover', '--request', a, '--to', merchant.url, '--no-reactivate', '--json'], {
      env: merchant.env,
    });
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as RecoverJson;
    expect(report.ok).toBe(false);
    expect(report.streams[0]).toMatchObject({ request_id: a, events: 2, failed: 1, held: 1, last_seq: null });
    expect(report.streams[0]!.failures).toMatchObject([{ seq: 1, status: 401, code: 'attestation_invalid' }]);
    expect(seqsOf(merchant, a)).toEqual([0]);
  });

  it('an event whose attestation has expired is not sent: attestation_expired, with the ways out', async () => {
    // Attestations that expired two minutes before they were made, as after an outage longer than their lifetime.
    const service = await startKybService({ quarantineAfter: 3, timeScale: 1e-5, attestationTtlSeconds: -120 });
    cleanups.push(() => service.stop());
    const merchant = await startMerchant(service);
    cleanups.push(() => merchant.stop());
    const a = await releasedDuringOutage(service, merchant);
    const releasedId = service.request(a)!.events[1]!.event_id;

    const run = await runCli(['recover', '--request', a, '--to', merchant.url, '--no-reactivate', '--json'], {
      env: merchant.env,
    });
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as RecoverJson;
    expect(report.streams[0]).toMatchObject({ request_id: a, failed: 1, held: 1 });
    expect(report.streams[0]!.failures).toMatchObject([
      { event_id: releasedId, seq: 1, status: null, code: 'attestation_expired' },
    ]);
    expect(seqsOf(merchant, a)).toEqual([0]);

    const text = await runCli(['recover', '--request', a, '--to', merchant.url, '--no-reactivate'], {
      env: merchant.env,
    });
    expect(text.stdout).toContain(`\u2717 ${a} seq 1 (${releasedId}): not sent: its attestation expired at `);
    expect(text.stdout).toContain('replay it in your app with recover() of @kyb-webhooks/client');
    expect(text.stdout).toContain(`kyb-webhooks redeliver ${a}`);
  });

  it('--since keeps the requests whose log shows an unacknowledged delivery since then', async () => {
    const { merchant, a, b } = await quarantined();
    const future = await runCli(
      [
        'recover',
        '--request',
        a,
        '--request',
        b,
        '--since',
        '2099-01-01T00:00:00Z',
        '--to',
        merchant.url,
        '--json',
        '--no-reactivate',
      ],
      { env: merchant.env },
    );
    expect(future.code).toBe(0);
    expect(JSON.parse(future.stdout)).toMatchObject({ streams: [], not_selected: [a, b] });
    expect(seqsOf(merchant, a)).toEqual([0]);

    const recent = await runCli(['recover', '--request', a, '--since', '1h', '--to', merchant.url, '--json'], {
      env: merchant.env,
    });
    expect(recent.code).toBe(0);
    expect(JSON.parse(recent.stdout)).toMatchObject({ streams: [{ request_id: a, processed: 1 }], not_selected: [] });
  });

  it('draws a progress line on a terminal (stderr)', async () => {
    const { merchant, a, b } = await quarantined();
    const run = await runCliOnTerminalAsync(['recover', '--request', a, '--request', b, '--to', merchant.url], {
      env: merchant.env,
    });
    if (run === undefined) return; // no `script` here
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`[1/2] ${a}: replaying`);
    expect(run.stdout).toContain(`[2/2] ${b}: replaying`);
    expect(run.stdout).not.toContain(merchant.env.KYB_API_KEY);
  });
});

describe('recover: usage errors (exit 2, nothing sent) and API errors (exit 1)', () => {
  it.each([
    [[], 'say which streams to recover: --request <request-id>'],
    [['--since', '12h'], 'the KYB API has no call that lists requests'],
    [['--request', 'dr_1', '--secret-version', '7'], 'KYB_SECRET_V7 is not set (the environment has version 1)'],
    [['--request', 'dr_1', '--since', 'yesterday'], "option '--since <time>' argument 'yesterday' is invalid"],
  ])('recover %j', async (args, message) => {
    const service = await startKybService();
    cleanups.push(() => service.stop());
    const merchant = await startMerchant(service);
    cleanups.push(() => merchant.stop());
    const run = await runCli(['recover', ...args, '--to', merchant.url], { env: merchant.env });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
    expect(service.apiCalls).toEqual([]);
  });

  it('a wrong API key: exit 1, every stream and the reactivation report unauthorized with the fix, the key never printed', async () => {
    const { service, merchant, a } = await quarantined();
    const wrongKey = 'kyb_live_wrong_key_0123456789abcdef';
    const run = await runCli(['recover', '--request', a, '--to', merchant.url], {
      env: { ...merchant.env, KYB_API_KEY: wrongKey },
    });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(`\u2717 ${a}: KYB API error unauthorized (HTTP 401)`);
    expect(run.stdout).toContain('\u2717 reactivate failed: KYB API error unauthorized (HTTP 401)');
    expect(run.stdout).toContain('fix: check KYB_API_KEY (or --api-key)');
    expect(run.stdout + run.stderr).not.toContain(wrongKey);
    expect(service.quarantined).toBe(true);
    expect(seqsOf(merchant, a)).toEqual([0]);
  });

  it('names the variables to set when the API key, the URL or the webhook secret is missing', async () => {
    const noKey = await runCli(['recover', '--request', 'dr_1', '--to', 'http://127.0.0.1:9/webhooks/kyb'], {
      env: { KYB_API_KEY: '', KYB_BASE_URL: '', KYB_SECRET_V1: 'whsec_x' },
    });
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain('set KYB_API_KEY (or pass --api-key)');
    expect(noKey.stderr).toContain('set KYB_BASE_URL (or pass --base-url)');
    const noSecret = await runCli(['recover', '--request', 'dr_1', '--to', 'http://127.0.0.1:9/webhooks/kyb'], {
      env: { KYB_API_KEY: 'kyb_test_secret_value', KYB_BASE_URL: 'http://127.0.0.1:9', KYB_SECRET_V1: '' },
    });
    expect(noSecret.code).toBe(2);
    expect(noSecret.stderr).toContain('set KYB_SECRET_V<n>');
    expect(noSecret.stderr).not.toContain('kyb_test_secret_value');
  });
});
