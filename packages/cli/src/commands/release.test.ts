import { defaultReleasedAnswers, startKybService, type KybService } from '@kyb-webhooks/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CLI_TEST_TIMEOUT_MS, runCli, startMerchant, type Merchant } from '../e2e-support.js';

vi.setConfig({ testTimeout: CLI_TEST_TIMEOUT_MS });

// `release` end to end: pulled from the local KYB service, verified against its JWKS like a webhook.
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

const answers = defaultReleasedAnswers();

function expectNoAnswerValues(text: string) {
  for (const answer of answers) expect(text).not.toContain(String(answer.value));
}

describe('release', () => {
  it('prints the verified answers by subject and name; --json for scripts', async () => {
    const requestId = await service.createDataRequest();
    const released = await service.release(requestId);
    const run = await runCli(['release', requestId], { env: merchant.env });
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    const rows = run.stdout
      .trimEnd()
      .split('\n')
      .map((line) => line.split(/\s{2,}/));
    expect(rows[0]).toEqual(['subject', 'subject_type', 'name', 'value']);
    // Two directors answering the same field are two rows: subject and name together are the key (spec 2.6).
    expect(rows.slice(2, -1)).toEqual(
      answers.map((answer) => [answer.subject, answer.subject_type, answer.name, answer.value]),
    );
    expect(run.stdout).toContain(`\u2713 verified release of ${requestId} (event ${released.event_id}, seq 1)`);

    const json = await runCli(['release', requestId, '--json'], { env: merchant.env });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({
      request_id: requestId,
      status: 'released',
      verified: expect.objectContaining({ event_id: released.event_id, seq: 1, iss: service.issuer }),
      answers,
    });
    expect(run.stdout + json.stdout).not.toContain(service.apiKey);
    expect(service.apiCalls.filter((call) => call.path.endsWith('/release')).every((call) => call.authorized)).toBe(
      true,
    );
  });

  it('not released yet is not an error (exit 0); purged is exit 1 with what to do', async () => {
    const requestId = await service.createDataRequest();
    const pending = await runCli(['release', requestId], { env: merchant.env });
    expect(pending.code).toBe(0);
    expect(pending.stdout).toContain(`${requestId} is not released yet (404 not_released: not an error`);

    await service.release(requestId);
    service.purge(requestId);
    const purged = await runCli(['release', requestId], { env: merchant.env });
    expect(purged.code).toBe(1);
    expect(purged.stderr).toContain('410 payload_expired');
    expect(purged.stderr).toContain('create a new request');
    const purgedJson = await runCli(['release', requestId, '--json'], { env: merchant.env });
    expect(purgedJson.code).toBe(1);
    expect(JSON.parse(purgedJson.stdout)).toEqual({ request_id: requestId, status: 'payload_expired' });
  });

  it('a release that does not verify (another audience): exit 1, attestation_rejected, no answer printed', async () => {
    const requestId = await service.createDataRequest();
    await service.release(requestId);
    const run = await runCli(['release', requestId, '--audience', 'another-merchant'], { env: merchant.env });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('KYB API error attestation_rejected');
    expect(run.stderr).toContain('check --issuer/KYB_ATTESTATION_ISSUER and --audience/KYB_AUDIENCE');
    expectNoAnswerValues(run.stdout + run.stderr);
  });

  it('without issuer or audience: exit 2 naming what to set, nothing pulled', async () => {
    const before = service.apiCalls.length;
    const run = await runCli(['release', 'dr_1'], {
      env: { ...merchant.env, KYB_ATTESTATION_ISSUER: '', KYB_AUDIENCE: '' },
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('set KYB_ATTESTATION_ISSUER (or pass --issuer)');
    expect(run.stderr).toContain('set KYB_AUDIENCE (or pass --audience)');
    expect(service.apiCalls.length).toBe(before);
  });
});
