/**
 * Issue 12 §5, a fleet: two receiver processes (tests/fleet/worker.ts, Express) share one Redis, then one PostgreSQL
 * store, with ordering `enforce` and gaps backfilled from the local KYB service. Deliveries of several streams are
 * spread across both processes, out of order (each stream's last event goes first) and duplicated on purpose (every
 * event to both processes), each retried until acknowledged as the service would. The handlers append to a durable
 * log in the shared store (a Redis list, a PostgreSQL table): every stream's events must appear there once, in order.
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  createTestSender,
  createTestSigner,
  startKybService,
  ulid,
  type KybService,
  type TestEnvelope,
  type TestSender,
} from '@kyb-webhooks/testing';
import { testService } from '../../scripts/services/env.js';
import { pool, startFleet, type Worker } from '../fleet/fleet.js';
import { prepareLog, prepareStore, readLog } from '../fleet/stores.js';

const WALLET_STREAMS = 3;
const WALLET_CHANGES = 8;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Data requests (pending, released), signature requests (pending, signed) and businesses changing wallets. */
async function createStreams(service: KybService): Promise<string[]> {
  const ids: string[] = [];
  for (let index = 0; index < 3; index++) {
    const id = await service.createDataRequest();
    await service.release(id);
    ids.push(id);
  }
  for (let index = 0; index < 2; index++) {
    const id = await service.createSignatureRequest();
    await service.sign(id);
    ids.push(id);
  }
  for (let index = 0; index < WALLET_STREAMS; index++) {
    const businessId = `biz_fleet_${index}_${ulid().toLowerCase()}`;
    for (let change = 0; change < WALLET_CHANGES; change++) {
      await service.changeBusinessWallet({
        businessId,
        previous: `0x${index}${change}`,
        next: `0x${index}${change + 1}`,
      });
    }
    ids.push(businessId);
  }
  return ids;
}

/**
 * Delivers one copy like the service would: retried on any non-2xx (409 in_progress while the other process runs the
 * event or an earlier one of its stream) for up to 60 s, longer than the workers' lease, so that even a claim left
 * behind by a store timeout on this loaded machine expires and is taken over. Resolves to the answers, as
 * `status code` strings.
 */
async function deliverUntilAcknowledged(sender: TestSender, envelope: TestEnvelope): Promise<string[]> {
  const answers: string[] = [];
  const deadline = Date.now() + 60_000;
  for (let attempt = 1; Date.now() < deadline; attempt++) {
    const { status, code } = await sender.deliverOnce(envelope, { attempt });
    answers.push(`${status} ${code ?? ''}`.trim());
    if (status !== null && status >= 200 && status < 300) break;
    await sleep(Math.min(10 * attempt, 250));
  }
  return answers;
}

describe.each([
  ['Redis', testService('redis'), 'redis'],
  ['PostgreSQL', testService('postgres'), 'postgres'],
] as const)('two receiver processes sharing %s', (_title, store, kind) => {
  let workers: Worker[] = [];
  let service: KybService | undefined;
  afterAll(async () => {
    await Promise.all(workers.map((worker) => worker.kill()));
    await service?.stop();
  });

  it.skipIf(!store.url)(
    `keep every stream in order and run each event once under out-of-order, duplicated deliveries ${store.skipReason ?? ''}`,
    { timeout: 180_000 },
    async () => {
      service = await startKybService();
      const namespace = `streams_${ulid().toLowerCase()}`;
      await prepareStore(kind, store.url!, namespace);
      await prepareLog(kind, store.url!, namespace);
      const signer = await createTestSigner();
      workers = await startFleet(2, {
        KYB_STORE: kind,
        KYB_STORE_URL: store.url!,
        KYB_STORE_NAMESPACE: namespace,
        KYB_SECRET: signer.secrets[signer.currentVersion]!,
        KYB_HANDLER_MS: '2',
        // A claim stranded by a store timeout frees within the lease (20 s: handler deadline 10 s, store deadline 2.5 s),
        // well inside the senders' 60 s; and PostgreSQL connections are waited for long enough on a loaded machine.
        KYB_LEASE_MS: '20000',
        KYB_PG_CONNECT_TIMEOUT_MS: '5000',
        KYB_API_URL: service.baseUrl,
        KYB_API_KEY: service.apiKey,
        KYB_ATTESTATION_ISSUER: service.issuer,
        KYB_AUDIENCE: service.audience,
        KYB_JWKS_URL: service.jwksUrl,
      });
      const senders = workers.map((worker) => createTestSender({ url: worker.url, signer }));

      // The service holds the streams (no endpoint): this test plays its deliveries, in the worst order it could.
      const ids = await createStreams(service);
      const streams = ids.map((id) => service!.request(id)!.events);
      const copies = streams.flatMap((events) =>
        events.flatMap((envelope) => senders.map((sender) => ({ sender, envelope }))),
      );
      for (let i = copies.length - 1; i > 0; i--) {
        const j = Math.floor(Math.random() * (i + 1));
        [copies[i], copies[j]] = [copies[j]!, copies[i]!];
      }
      // Each stream's last event first, to alternating processes: they must backfill the rest from the API.
      const lasts = streams.map((events, index) => ({
        sender: senders[index % senders.length]!,
        envelope: events.at(-1)!,
      }));
      const results = await pool(
        [...lasts, ...copies].map(
          ({ sender, envelope }) =>
            () =>
              deliverUntilAcknowledged(sender, envelope),
        ),
        8,
      );

      expect(results.filter((answers) => !answers.at(-1)!.startsWith('200'))).toEqual([]);
      const log = await readLog(kind, store.url!, namespace);
      for (const [index, id] of ids.entries()) {
        const runs = log.filter((run) => run.streamId === id);
        expect({ id, seqs: runs.map((run) => run.seq) }).toEqual({
          id,
          seqs: streams[index]!.map((event) => event.seq),
        });
        expect(runs.map((run) => run.eventId)).toEqual(streams[index]!.map((event) => event.event_id));
      }
      expect(log.length).toBe(streams.flat().length);
      // Both processes ran handlers, and gaps were filled from the API, not only by deliveries.
      expect(new Set(log.map((run) => run.pid))).toEqual(new Set(workers.map((worker) => worker.pid)));
      expect(log.some((run) => run.fetched)).toBe(true);
    },
  );
});
