// Watching never changes what is watched: a telemetry layer whose enabled() or around() throws leaves every delivery
// answered as without it, and a handler or store answering with a lazy thenable (a query builder that runs again on
// each call of its `then`) runs once however many layers and subscribers watch it.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, testStream, type TestSigner } from '../../test-kit.js';
import { createReceiver } from '../receiver.js';
import type { DedupeStore } from '../store/dedupe.js';
import { createMemoryStore } from '../store/memory-store.js';
import { TRACING_CHANNELS } from './channels.js';
import type { ReceiverTelemetry } from './observers.js';
import { diagnostics, type TracePhase as Phase } from '../../test-channels.js';

const NOW = Date.UTC(2026, 11, 1, 12, 0, 0);
const SECRET = 'guarded-telemetry-secret';
let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW, secrets: { '1': SECRET } });
});

/** Delivers one event; answers its code and how often the handler ran. */
async function deliver(telemetry: ReceiverTelemetry | undefined, handler?: () => unknown, store?: DedupeStore) {
  const receiver = createReceiver({
    secrets: { '1': SECRET },
    now: () => NOW,
    logger: false,
    store: store ?? createMemoryStore({ now: () => NOW }),
    ...(telemetry ? { telemetry } : {}),
  });
  let runs = 0;
  receiver.onAny(() => {
    runs++;
    return handler?.();
  });
  const { headers, body } = await signer.sign(testStream(['kyb.data_request.pending_approval'])[0]!);
  const answer = await receiver.receive({ method: 'POST', headers, body });
  return { status: answer.status, code: answer.code, runs };
}

const broken = new Error('the telemetry layer broke');
const passThrough: ReceiverTelemetry['around'] = (_operation, _trace, run) => run();

describe('a telemetry layer that throws', () => {
  it.each<[string, ReceiverTelemetry]>([
    [
      'in enabled()',
      {
        enabled() {
          throw broken;
        },
        around: passThrough,
      },
    ],
    [
      'in around(), before running the operation',
      {
        around() {
          throw broken;
        },
      },
    ],
    [
      'in around(), after the operation returned',
      {
        around(_operation, _trace, run) {
          run();
          throw broken;
        },
      },
    ],
    [
      'in around() for store calls only',
      {
        around(operation, _trace, run) {
          if (operation === 'store') throw broken;
          return run();
        },
      },
    ],
    [
      'in around() for handlers only',
      {
        around(operation, _trace, run) {
          if (operation === 'handler') throw broken;
          return run();
        },
      },
    ],
  ])('%s: the delivery is answered as without it, its handler run once', async (_where, telemetry) => {
    expect(await deliver(telemetry)).toEqual({ status: 200, code: undefined, runs: 1 });
  });

  it("keeps the operation's own failure: a failing handler under a layer that then throws is handler_failed", async () => {
    const throwingAfter: ReceiverTelemetry = {
      around(_operation, _trace, run) {
        run();
        throw broken;
      },
    };
    const failing = () => Promise.reject(new Error('handler down'));
    expect(await deliver(throwingAfter, failing)).toEqual({ status: 500, code: 'handler_failed', runs: 1 });
    const synchronous = () => {
      throw new Error('handler down');
    };
    expect(await deliver(throwingAfter, synchronous)).toEqual({ status: 500, code: 'handler_failed', runs: 1 });
  });
});

/** A thenable that runs its work on each call of `then`, as Mongoose queries and Knex builders do. */
function lazyQuery<T>(value: T) {
  const counts = { executions: 0 };
  const thenable = {
    then<R1, R2>(onFulfilled?: (value: T) => R1, onRejected?: (reason: unknown) => R2) {
      counts.executions++;
      return Promise.resolve(value).then(onFulfilled, onRejected);
    },
  };
  return { thenable, counts };
}

describe('a lazy thenable answered by a handler or a store', () => {
  const watchers: [string, ReceiverTelemetry | undefined, boolean][] = [
    ['no telemetry', undefined, false],
    ['a telemetry layer', { around: passThrough }, false],
    ['a channel subscriber', undefined, true],
    ['both', { around: passThrough }, true],
  ];

  it.each(watchers)('runs once with %s watching', async (_who, telemetry, subscribe) => {
    if (subscribe && !diagnostics) return;
    const handlers: Record<Phase, () => void> = {
      start() {},
      end() {},
      asyncStart() {},
      asyncEnd() {},
      error() {},
    };
    const channels = subscribe
      ? [TRACING_CHANNELS.handler, TRACING_CHANNELS.store].map((name) => diagnostics!.tracingChannel(name))
      : [];
    for (const channel of channels) channel.subscribe(handlers);
    try {
      const query = lazyQuery({ saved: true });
      const memory = createMemoryStore({ now: () => NOW });
      const completes = lazyQuery(true);
      const store: DedupeStore = {
        claim: (id, options) => memory.claim(id, options),
        complete: (id, token, options) => {
          memory.complete(id, token, options);
          return completes.thenable as unknown as Promise<boolean>;
        },
        release: (id, token) => memory.release(id, token),
      };
      expect(await deliver(telemetry, () => query.thenable, store)).toEqual({ status: 200, code: undefined, runs: 1 });
      expect({ handler: query.counts.executions, complete: completes.counts.executions }).toEqual({
        handler: 1,
        complete: 1,
      });
    } finally {
      for (const channel of channels) channel.unsubscribe(handlers);
    }
  });
});
