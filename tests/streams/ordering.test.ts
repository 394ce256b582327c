/**
 * Ordering over real HTTP (issue 12 §5): the local KYB service delivers with the spec's rules to an Express app whose
 * receiver enforces per-stream order and backfills gaps through the KYB API client. No mocks: the service retries,
 * holds seq N+1 until N is done, and serves the events-after-seq call the client pages through.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, expect, it } from 'vitest';
import { createMemoryStore, createReceiver, streamOrdering } from '@kyb-webhooks/core';
import { kybWebhooks } from '@kyb-webhooks/express';
import { API_SHAPE_VARIANTS, randomSecret, startKybService } from '@kyb-webhooks/testing';
import { createKybClient } from '@kyb-webhooks/client';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

// Over every shape the API may answer its lists in (spec 4.2 shows none), one event a page so the backfill pages.
it.each(Object.entries(API_SHAPE_VARIANTS))(
  'API shape "%s": seq 1 exhausts its retries, seq 2 arrives, the gap is backfilled through the client: handlers see 0, 1, 2 in order',
  async (_name, apiShape) => {
    const service = await startKybService({ timeScale: 1e-5, retry: { maxAttempts: 3 }, apiShape });
    cleanups.push(() => service.stop());
    const secrets = { '1': randomSecret() };
    const client = createKybClient({ baseUrl: service.baseUrl, apiKey: service.apiKey, pageSize: 1 });
    const receiver = createReceiver({
      secrets,
      attestation: { issuer: service.issuer, audience: service.audience, jwksUrl: service.jwksUrl },
      store: createMemoryStore(),
      ordering: streamOrdering({
        mode: 'enforce',
        fetchEventsAfter: (s, a, signal) => client.events(s, { afterSeq: a, signal }),
      }),
    });
    const handled: [number, string][] = [];
    receiver.onAny((event, context) => {
      // Every delivery of the release fails, so the service gives it up; the copy fetched from the API (no delivery
      // attempt header) succeeds.
      if (event.event === 'kyb.data_request.released' && context.deliveryAttempt !== undefined)
        throw new Error('release store down');
      handled.push([event.seq, event.event]);
    });
    const app = express();
    app.post('/webhooks/kyb', kybWebhooks(receiver));
    const server: Server = await new Promise((resolve) => {
      const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
    });
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    service.setEndpoint({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/kyb`, secrets });

    const id = await service.createDataRequest();
    await service.release(id);
    await service.idle();
    expect(service.exhausted.map((event) => event.seq)).toEqual([1]);
    expect(handled).toEqual([[0, 'kyb.data_request.pending_approval']]);

    await service.emit(id, 'kyb.data_request.pending_approval');
    await service.idle();
    expect(handled).toEqual([
      [0, 'kyb.data_request.pending_approval'],
      [1, 'kyb.data_request.released'],
      [2, 'kyb.data_request.pending_approval'],
    ]);
    // seq 2 was answered 200 on its first attempt, once the backfill had run; the API was asked after seq 0.
    expect(
      service
        .attempts(id)
        .filter((attempt) => attempt.seq === 2)
        .map((attempt) => attempt.status),
    ).toEqual([200]);
    expect(service.apiCalls.some((call) => JSON.stringify(call).includes('after_seq=0'))).toBe(true);
  },
);
