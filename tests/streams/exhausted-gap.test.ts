/**
 * Issue 12 §5, an event that exhausts its retries, through the Koa example app: while the app's database is down,
 * every delivery of a request's seq 0 fails, and the local service gives it up after its (time-scaled) schedule and
 * moves on (spec 3). When seq 1 arrives, the receiver (ordering `enforce`) fetches seq 0 from the events API, runs
 * it, then seq 1: every event once, in order.
 */
import { afterEach, expect, it } from 'vitest';
import { startRig, type StreamRig } from './harness.js';

const MAX_ATTEMPTS = 4;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/** A request whose pending_approval (seq 0) is given up on while the database is down; the database then recovers. */
async function exhaustFirstEvent(
  options: Partial<Parameters<typeof startRig>[0]> = {},
): Promise<{ rig: StreamRig; id: string }> {
  let databaseDown = true;
  const rig = await startRig(
    {
      adapter: 'Koa',
      service: { timeScale: 1e-4, retry: { maxAttempts: MAX_ATTEMPTS } },
      beforeHandle: () => {
        if (databaseDown) throw new Error('database unavailable');
      },
      ...options,
    },
    cleanups,
  );
  const id = await rig.service.createDataRequest();
  await rig.service.idle();
  databaseDown = false;
  return { rig, id };
}

it('the service gives seq 0 up after its retry schedule: every attempt failed 500 handler_failed, waits growing', async () => {
  const { rig, id } = await exhaustFirstEvent();
  expect(rig.service.exhausted.map((event) => [event.stream_id, event.seq])).toEqual([[id, 0]]);
  const log = await rig.client.deliveries(id);
  expect(log.map((entry) => [entry.seq, entry.attempt, entry.status, entry.response_code])).toEqual(
    Array.from({ length: MAX_ATTEMPTS }, (_, index) => [0, index + 1, 500, 'handler_failed']),
  );
  // attempted_at is in seconds in the API; the service's own record has milliseconds. Each wait is at least the
  // scheduled one (Date.now() floors, hence the 1 ms).
  const starts = rig.service.attempts(id).map((attempt) => attempt.attemptedAt);
  for (let attempt = 2; attempt <= MAX_ATTEMPTS; attempt++) {
    expect(starts[attempt - 1]! - starts[attempt - 2]!).toBeGreaterThanOrEqual(
      Math.floor(rig.service.delayBefore(attempt)) - 1,
    );
  }
  expect(rig.handled).toEqual([]);
});

it('seq 1 arrives and seq 0 is backfilled through the API: handlers see 0 then 1, each once', async () => {
  const { rig, id } = await exhaustFirstEvent();
  await rig.service.release(id);
  await rig.service.idle();

  expect(rig.handled.map((entry) => [entry.seq, entry.event, entry.fetched])).toEqual([
    [0, 'kyb.data_request.pending_approval', true],
    [1, 'kyb.data_request.released', false],
  ]);
  // seq 1 was answered 200 on its first attempt, once the backfill had run.
  const log = await rig.client.deliveries(id);
  expect(log.filter((entry) => entry.seq === 1).map((entry) => [entry.attempt, entry.status])).toEqual([[1, 200]]);
  expect(rig.service.apiCalls.map((call) => call.path)).toContain(
    `/api/v1/kyb/data-requests/${id}/events?after_seq=-1`,
  );
});

it('a redelivery of the whole stream afterwards runs nothing again', async () => {
  const { rig, id } = await exhaustFirstEvent();
  await rig.service.release(id);
  await rig.service.idle();
  await rig.client.redeliver(id);
  await rig.service.idle();
  expect(rig.handled.map((entry) => entry.seq)).toEqual([0, 1]);
});

it('while the API cannot answer, seq 1 is answered 503 backfill_unavailable and the service retries it until the gap is filled', async () => {
  const { rig, id } = await exhaustFirstEvent({ client: { retry: { maxRetries: 0 } } });
  rig.service.failNextApiCalls(1, { status: 503 });
  await rig.service.release(id);
  await rig.service.idle();

  const log = await rig.client.deliveries(id);
  expect(
    log.filter((entry) => entry.seq === 1).map((entry) => [entry.attempt, entry.status, entry.response_code]),
  ).toEqual([
    [1, 503, 'backfill_unavailable'],
    [2, 200, undefined],
  ]);
  expect(rig.handled.map((entry) => entry.seq)).toEqual([0, 1]);
});
