import { createTestSender, testEvents, type TestEnvelope, type TestSigner } from '@kyb-webhooks/testing';
import type { Activity } from './handlers.js';

/** One line of the demo's table. */
export interface ScenarioRow {
  step: string;
  event: string;
  /** The HTTP answer; null when there was none (the app was down, or the row is not a delivery). */
  status: number | null;
  code: string;
  handler: string;
}

/** The example app as the scenario sees it: where to deliver, and what its handlers did. */
export interface DemoApp {
  url: string;
  activity: Activity;
  /** Queue mode: resolves once the worker has run every job queued so far, so a row shows what it then ran. */
  settled?: () => Promise<void>;
}

/**
 * Plays the demo scenario against a running webhook endpoint, delivering like the service does (signed,
 * retried, in order), plus the forged and relabelled deliveries an attacker would try, and finally a redelivery
 * after `restart()` restarted the app.
 */
export async function runDemoScenario(options: {
  app: DemoApp;
  signer: TestSigner;
  restart: () => Promise<DemoApp>;
}): Promise<ScenarioRow[]> {
  const { signer } = options;
  let { url, activity, settled } = options.app;
  let sender = createTestSender({ url, signer, retry: { maxAttempts: 3, baseDelayMs: 50 } });
  const rows: ScenarioRow[] = [];
  const record = async (step: string, envelope: TestEnvelope, status: number | null, code: string | undefined) => {
    await settled?.(); // queue mode: the answer came at enqueue; the row waits for what the worker then ran
    rows.push({
      step,
      event: envelope.event.replace(/^kyb\./, ''),
      status,
      code: code ?? '—',
      handler: activity.get(envelope.event_id) ?? '—',
    });
    activity.delete(envelope.event_id); // a later row for the same id shows only what that delivery did
  };
  const last = async (envelope: TestEnvelope) => {
    const delivery = await sender.send(envelope);
    const attempt = delivery.attempts.at(-1)!;
    return { status: attempt.status, code: attempt.code };
  };

  const stream = 'dr_demo_acme_' + Date.now().toString(36);
  const pending = testEvents.dataRequestPendingApproval({ stream_id: stream, seq: 0 });
  let result = await last(pending);
  await record('data request pending approval', pending, result.status, result.code);

  // The service keeps the same attestation across retries; sign once and reuse the carried envelope.
  const released = await signer.withAttestation(testEvents.dataRequestReleased({ stream_id: stream, seq: 1 }));
  result = await last(released);
  await record('released with attestation (two directors)', released, result.status, result.code);

  let attempt = await sender.deliverOnce(released, { attempt: 2 });
  await record('same release redelivered', released, attempt.status, attempt.code);

  const refusedForged = testEvents.dataRequestRefused();
  attempt = await sender.deliverOnce(refusedForged, { secret: 'whsec_guessed_by_attacker' });
  await record('forged HMAC', refusedForged, attempt.status, attempt.code);

  const relabelled = { ...released, event_id: testEvents.dataRequestReleased().event_id };
  attempt = await sender.deliverOnce(relabelled);
  await record('release relabelled to another event_id', relabelled, attempt.status, attempt.code);

  const unknown: TestEnvelope = {
    ...testEvents.dataRequestRefused(),
    event: 'kyb.business.risk_flagged',
    data: { level: 'review' },
  };
  const attestedUnknown = await signer.withAttestation(unknown, { attest: true });
  result = await last(attestedUnknown);
  await record('attested event of an unknown type', attestedUnknown, result.status, result.code);

  const refused = testEvents.dataRequestRefused({ data: { reason: 'threshold_not_met' } });
  result = await last(refused);
  await record('another data request refused', refused, result.status, result.code);

  const signed = testEvents.signatureRequestSigned();
  result = await last(signed);
  await record('signature request signed', signed, result.status, result.code);

  ({ url, activity, settled } = await options.restart());
  sender = createTestSender({ url, signer, retry: { maxAttempts: 3, baseDelayMs: 50 } });
  attempt = await sender.deliverOnce(released, { attempt: 3 });
  await record('same release after an app restart', released, attempt.status, attempt.code);

  return rows;
}

/** The rows as an aligned text table; `handlerHeader` titles the last column. */
export function formatScenarioTable(rows: readonly ScenarioRow[], handlerHeader = 'what the handler did'): string {
  const header = { step: 'delivery', event: 'event', status: 'status', code: 'code', handler: handlerHeader };
  const all = [header, ...rows.map((row) => ({ ...row, status: String(row.status ?? '—') }))];
  const keys = ['step', 'event', 'status', 'code', 'handler'] as const;
  const widths = keys.map((key) => Math.max(...all.map((row) => String(row[key]).length)));
  const line = (row: (typeof all)[number]) =>
    keys
      .map((key, index) => String(row[key]).padEnd(widths[index]!))
      .join('  ')
      .trimEnd();
  return [line(all[0]!), widths.map((width) => '-'.repeat(width)).join('  '), ...all.slice(1).map(line)].join('\n');
}
