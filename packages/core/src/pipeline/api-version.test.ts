import { beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, testStream, type TestEnvelope, type TestSigner } from '../../test-kit.js';
import { KybWebhookError } from '../errors.js';
import type { LogEntry } from '../log/logger.js';
import { createReceiver } from '../receiver.js';
import type { ReceiverOptions } from '../receiver-types.js';
import { createMemoryStore } from '../store/memory-store.js';

const NOW = Date.UTC(2026, 10, 28, 12, 0, 0);
const SECRET = 'api-version-secret';
const PENDING = 'kyb.data_request.pending_approval';
let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW, secrets: { '1': SECRET } });
});

function setup(overrides: Partial<ReceiverOptions> = {}) {
  const logs: LogEntry[] = [];
  const store = createMemoryStore({ now: () => NOW });
  const receiver = createReceiver({
    secrets: { '1': SECRET },
    now: () => NOW,
    store,
    logger: (entry) => logs.push(entry),
    ...overrides,
  });
  const seen: string[] = [];
  receiver.onAny((event, context) => void seen.push(`${event.event_id} ${context.apiVersion}`));
  const deliver = async (envelope: TestEnvelope, header?: string) => {
    const { headers, body } = await signer.sign(envelope);
    const sent = header === undefined ? headers : { ...headers, 'service-kyb-api-version': header };
    return receiver.receive({ method: 'POST', headers: sent, body });
  };
  return { receiver, deliver, logs, seen, store };
}

/** A pending_approval event of `version`. */
const ofVersion = (version: string): TestEnvelope => ({ ...testStream([PENDING])[0]!, api_version: version });
const coded = (logs: LogEntry[], code: string) => logs.filter((entry) => entry.code === code);

describe('api_version on the context', () => {
  it('gives handlers the signed api_version', async () => {
    const { deliver, seen } = setup();
    const event = ofVersion('2026-06-01');
    expect((await deliver(event)).status).toBe(200);
    expect(seen).toEqual([`${event.event_id} 2026-06-01`]);
  });
});

describe('a Service-Kyb-Api-Version header that disagrees with the body', () => {
  it('is logged as suspect once per pair, and the signed body wins', async () => {
    const { deliver, logs, seen } = setup();
    const first = ofVersion('2026-01-01');
    await deliver(first, '2026-06-01');
    await deliver(ofVersion('2026-01-01'), '2026-06-01');
    await deliver(ofVersion('2026-01-01'), '2027-01-01');
    await deliver(ofVersion('2026-01-01')); // agrees
    expect(seen.map((line) => line.split(' ')[1])).toEqual(['2026-01-01', '2026-01-01', '2026-01-01', '2026-01-01']);
    const suspect = coded(logs, 'api_version_suspect');
    expect(suspect.map((entry) => entry.message)).toEqual([
      'the Service-Kyb-Api-Version header (2026-06-01) disagrees with the signed api_version (2026-01-01); the body is authoritative, so 2026-01-01 is used. A proxy may rewrite the header',
      'the Service-Kyb-Api-Version header (2027-01-01) disagrees with the signed api_version (2026-01-01); the body is authoritative, so 2026-01-01 is used. A proxy may rewrite the header',
    ]);
    expect(suspect[0]).toMatchObject({ level: 'warn', eventId: first.event_id, eventType: PENDING });
  });

  it('logs at most 64 pairs, so a sender varying the header can neither flood the log nor grow memory', async () => {
    const { deliver, logs } = setup();
    for (let index = 0; index < 70; index++) await deliver(ofVersion('2026-01-01'), `h${index}`);
    expect(coded(logs, 'api_version_suspect')).toHaveLength(64);
  });

  it('logs nothing for a delivery whose HMAC failed', async () => {
    const { receiver, logs } = setup();
    const { headers, body } = await signer.sign(ofVersion('2026-01-01'));
    const tampered = new Uint8Array(body);
    tampered[tampered.length - 3] = tampered[tampered.length - 3]! ^ 1;
    await receiver.receive({
      method: 'POST',
      headers: { ...headers, 'service-kyb-api-version': '1999-01-01' },
      body: tampered,
    });
    expect(coded(logs, 'api_version_suspect')).toEqual([]);
  });
});

describe('apiVersion.expected', () => {
  it('processes another version by default, logging it once per version with what to check', async () => {
    const { deliver, logs, seen } = setup({ apiVersion: { expected: '2026-01-01' } });
    expect((await deliver(ofVersion('2026-06-01'))).status).toBe(200);
    expect((await deliver(ofVersion('2026-06-01'))).status).toBe(200);
    expect((await deliver(ofVersion('2026-01-01'))).status).toBe(200);
    expect((await deliver(ofVersion('2027-01-01'))).status).toBe(200);
    expect(seen).toHaveLength(4);
    expect(coded(logs, 'api_version_other').map((entry) => entry.message)).toEqual([
      'deliveries of api_version 2026-06-01 arrive; this receiver was written for 2026-01-01. They are processed; check what changed in 2026-06-01 (new fields, new event types), then set apiVersion.expected to 2026-06-01',
      'deliveries of api_version 2027-01-01 arrive; this receiver was written for 2026-01-01. They are processed; check what changed in 2027-01-01 (new fields, new event types), then set apiVersion.expected to 2027-01-01',
    ]);
  });

  it("with onOther 'reject', answers 503 api_version_unsupported before anything is stored, so the retry runs it", async () => {
    const strict = setup({ apiVersion: { expected: '2026-01-01', onOther: 'reject' } });
    const event = ofVersion('2026-06-01');
    const refused = await strict.deliver(event);
    expect(refused).toMatchObject({
      status: 503,
      code: 'api_version_unsupported',
      body: { error: { code: 'api_version_unsupported' } },
    });
    expect(strict.seen).toEqual([]);
    expect(strict.logs.find((entry) => entry.code === 'api_version_unsupported')?.detail).toBe(
      'api_version 2026-06-01; this receiver accepts 2026-01-01',
    );
    // Nothing was claimed: after the deploy, a receiver on the same store runs the retry.
    const deployed = setup({ store: strict.store, apiVersion: { expected: '2026-06-01', onOther: 'reject' } });
    expect((await deployed.deliver(event)).status).toBe(200);
    expect(deployed.seen).toEqual([`${event.event_id} 2026-06-01`]);
    expect((await strict.deliver(ofVersion('2026-01-01'))).status).toBe(200);
  });

  it('never rejects an event fetched from the API (replay) for its version', async () => {
    const { receiver, seen } = setup({ apiVersion: { expected: '2026-01-01', onOther: 'reject' } });
    const event = ofVersion('2026-06-01');
    expect((await receiver.replay(structuredClone(event))).status).toBe(200);
    expect(seen).toEqual([`${event.event_id} 2026-06-01`]);
  });

  it.each([
    [{ expected: '2026-1-1' }, "`apiVersion.expected` must be an api_version, a date YYYY-MM-DD such as '2026-01-01'"],
    [{ onOther: 'reject' }, '`apiVersion.expected` is missing'],
    [{ expected: '2026-01-01', onOther: 'refuse' }, "`apiVersion.onOther` must be 'accept'"],
    [{ pinned: '2026-01-01' }, 'did you mean `apiVersion.expected`'],
  ])('refuses %j at creation, naming the fix', (apiVersion, expected) => {
    let error: unknown;
    try {
      createReceiver({ secrets: { '1': SECRET }, apiVersion: apiVersion as never });
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(KybWebhookError);
    expect((error as KybWebhookError).code).toBe('config_invalid');
    expect((error as KybWebhookError).message).toContain(expected);
  });
});
