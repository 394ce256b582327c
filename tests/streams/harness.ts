/**
 * What the stream scenarios share: the local KYB service, the typed client, a receiver ordering with them, and one of
 * the four example apps (Express, Fastify, Koa, Hono) serving it on 127.0.0.1, so every scenario runs over real HTTP
 * through a real adapter. The apps come from examples/*, which also resolve their framework for the tests.
 */
import {
  createMemoryStore,
  createReceiver,
  DEFAULT_BACKFILL_RETRY_AFTER_MS,
  type DedupeStore,
  type Receiver,
  type ReceiverOptions,
  streamOrdering,
} from '@kyb-webhooks/core';
import { createKybClient, type KybClient, type KybClientOptions } from '@kyb-webhooks/client';
import { randomSecret, startKybService, type KybService, type KybServiceOptions } from '@kyb-webhooks/testing';
import type { ServedApp } from '../../examples/shared/src/index.js';
import { serveApp as serveExpress } from '../../examples/express/src/serve.js';
import { serveApp as serveFastify } from '../../examples/fastify/src/serve.js';
import { serveApp as serveHono } from '../../examples/hono/src/serve.js';
import { serveApp as serveKoa } from '../../examples/koa/src/serve.js';

/** The adapters the scenarios run through, each served by its example app. */
export const adapters = { Express: serveExpress, Fastify: serveFastify, Koa: serveKoa, Hono: serveHono } as const;
export type AdapterName = keyof typeof adapters;

/** The adapters every-adapter scenarios run through. */
export const workingAdapters: readonly AdapterName[] = ['Express', 'Fastify', 'Koa', 'Hono'];

/** One handler run as the durable-log stand-in of a single-process scenario records it. */
export interface Handled {
  streamId: string;
  seq: number;
  event: string;
  eventId: string;
  /** Fetched from the KYB API to fill a gap rather than delivered. */
  fetched: boolean;
  deliveryAttempt: number | undefined;
}

export interface StreamRig {
  service: KybService;
  client: KybClient;
  receiver: Receiver;
  app: ServedApp;
  /** The endpoint's secrets, as the receiver is configured with them. */
  secrets: Record<string, string>;
  /** Every handler run, in the order they ran. */
  handled: Handled[];
  /** The seqs of one stream's handler runs, in the order they ran. */
  seqs(streamId: string): number[];
  /** Stops the app (an outage as the service sees it: connection refused). */
  stopApp(): Promise<void>;
  /** Serves the same receiver again (the app is back) and points the service's endpoint at it. */
  startApp(): Promise<void>;
  /** Points the service's endpoint at the app: from then on the service delivers to it. */
  connect(): void;
}

export interface RigOptions {
  adapter: AdapterName;
  service?: KybServiceOptions;
  /** Default enforce, with the client's events-after-seq call and the service's seq base. */
  ordering?: ReceiverOptions['ordering'];
  store?: DedupeStore;
  /** Overrides of the client's options (e.g. no retries). */
  client?: Partial<KybClientOptions>;
  /** Leave the service without an endpoint (its events queue) until {@link StreamRig.connect}. */
  connect?: boolean;
  /** Runs before a handler records the event: throw to make the delivery fail. */
  beforeHandle?: (handled: Handled) => void;
}

/**
 * Starts the local service, a receiver that orders with it, and the chosen example app; the service delivers to it
 * (unless `connect: false`). Everything started is stopped by the functions pushed onto `cleanups`.
 */
export async function startRig(options: RigOptions, cleanups: (() => Promise<void>)[]): Promise<StreamRig> {
  const service = await startKybService({ timeScale: 1e-5, ...options.service });
  cleanups.push(() => service.stop());
  const secrets = { '1': randomSecret() };
  const client = createKybClient({
    baseUrl: service.baseUrl,
    apiKey: service.apiKey,
    attestation: { issuer: service.issuer, audience: service.audience },
    ...options.client,
  });
  const firstSeq = (options.service?.seqBase ?? 0) as 0 | 1;
  // The service's retries run on a scaled clock; the receiver's memory of a gap the API could not fill (5 s against
  // retries minutes apart) is scaled with it, or every time-scaled retry would meet the answer of the one before.
  const timeScale = options.service?.timeScale ?? 1e-5;
  const backfillRetryAfterMs = Math.round(DEFAULT_BACKFILL_RETRY_AFTER_MS * timeScale);
  const receiver = createReceiver({
    secrets,
    attestation: { issuer: service.issuer, audience: service.audience, jwksUrl: service.jwksUrl },
    store: options.store ?? createMemoryStore(),
    ordering:
      options.ordering ??
      streamOrdering({
        mode: 'enforce',
        firstSeq,
        backfillRetryAfterMs,
        fetchEventsAfter: (streamId, afterSeq, signal) => client.events(streamId, { afterSeq, signal }),
      }),
  });
  const handled: Handled[] = [];
  receiver.onAny((event, context) => {
    const entry: Handled = {
      streamId: event.stream_id,
      seq: event.seq,
      event: event.event,
      eventId: event.event_id,
      fetched: context.authentication.fetched === true,
      deliveryAttempt: context.deliveryAttempt,
    };
    options.beforeHandle?.(entry);
    handled.push(entry);
  });

  let app: ServedApp | undefined;
  let connected = options.connect !== false;
  const rig: StreamRig = {
    service,
    client,
    receiver,
    get app() {
      return app!;
    },
    secrets,
    handled,
    seqs: (streamId) => handled.filter((entry) => entry.streamId === streamId).map((entry) => entry.seq),
    async stopApp() {
      await app?.close();
      app = undefined;
    },
    async startApp() {
      app = await adapters[options.adapter](receiver);
      if (connected) rig.connect();
    },
    connect() {
      connected = true;
      if (app) service.setEndpoint({ url: app.url, secrets });
    },
  };
  cleanups.push(() => rig.stopApp());
  await rig.startApp();
  return rig;
}
