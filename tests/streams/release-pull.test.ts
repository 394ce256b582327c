/**
 * Issue 12 §5, release pulls, through the Express example app: the app's handlers pull the release with the typed
 * client when the webhooks arrive. Before the release the pull is `not_released` (404, not an error); after it,
 * `released`, verified, with the same answers as the webhook, keyed by subject and name (spec 2.6); after the values
 * are purged, `payload_expired` (410: create a new request).
 */
import { afterEach, expect, it } from 'vitest';
import type { ReleaseResult } from '@kyb-webhooks/client';
import { TEST_SUBJECTS } from '@kyb-webhooks/testing';
import { startRig, type StreamRig } from './harness.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

interface Pulled {
  seq: number;
  result: ReleaseResult;
  /** The answers the webhook itself carried (releases only), as `subject/name=value`. */
  webhook?: string[];
}

/** The app pulls the release of every request it hears about, as a merchant reconciling would. */
async function pullingApp(): Promise<{ rig: StreamRig; pulled: Pulled[] }> {
  const rig = await startRig({ adapter: 'Express' }, cleanups);
  const pulled: Pulled[] = [];
  rig.receiver.on('kyb.data_request.pending_approval', async (event, context) => {
    pulled.push({ seq: event.seq, result: await rig.client.release(event.stream_id, { signal: context.signal }) });
  });
  rig.receiver.on('kyb.data_request.released', async (event, context) => {
    const webhook = [...context.answers].map((answer) => `${answer.subject}/${answer.name}=${String(answer.value)}`);
    pulled.push({
      seq: event.seq,
      result: await rig.client.release(event.stream_id, { signal: context.signal }),
      webhook,
    });
  });
  return { rig, pulled };
}

function asText(result: ReleaseResult): string[] {
  return result.status === 'released'
    ? [...result.answers].map((answer) => `${answer.subject}/${answer.name}=${String(answer.value)}`)
    : [];
}

it('pulled before the release: not_released (404), and the delivery is still acknowledged', async () => {
  const { rig, pulled } = await pullingApp();
  const id = await rig.service.createDataRequest();
  await rig.service.idle();
  expect(pulled.map((entry) => [entry.seq, entry.result.status])).toEqual([[0, 'not_released']]);
  expect(rig.service.attempts(id).map((attempt) => attempt.status)).toEqual([200]);
  expect(rig.service.apiCalls.find((call) => call.path.endsWith('/release'))?.status).toBe(404);
});

it('pulled after the release: released, the same answers as the webhook, two directors kept apart', async () => {
  const { rig, pulled } = await pullingApp();
  const id = await rig.service.createDataRequest();
  await rig.service.release(id);
  await rig.service.idle();

  const released = pulled.find((entry) => entry.seq === 1)!;
  expect(released.result.status).toBe('released');
  expect(asText(released.result)).toEqual(released.webhook);
  const { answers, claims } = released.result as Extract<ReleaseResult, { status: 'released' }>;
  expect(claims.request_id).toBe(id);
  expect(answers.byName('director_name').map((answer) => [answer.subject, answer.value])).toEqual([
    [TEST_SUBJECTS.firstDirector, 'Jane Doe'],
    [TEST_SUBJECTS.secondDirector, 'Rahul Mehta'],
  ]);
  expect(answers.get(TEST_SUBJECTS.secondDirector, 'director_date_of_birth')?.value).toBe('1975-11-03');
});

it('pulled after the purge: payload_expired (410), while the webhook the app processed stays processed', async () => {
  const { rig, pulled } = await pullingApp();
  const id = await rig.service.createDataRequest();
  await rig.service.idle();
  await rig.service.release(id);
  await rig.service.idle();
  rig.service.purge(id);

  await expect(rig.client.release(id)).resolves.toEqual({ status: 'payload_expired' });
  expect(rig.service.apiCalls.at(-1)?.status).toBe(410);
  // A redelivery of the stream after the purge runs no handler again (and so pulls nothing).
  await rig.client.redeliver(id);
  await rig.service.idle();
  expect(pulled.map((entry) => [entry.seq, entry.result.status])).toEqual([
    [0, 'not_released'],
    [1, 'released'],
  ]);
});
