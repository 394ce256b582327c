/**
 * The receiver of the queue section: the bench's configuration (both checks, the pinned clock, the default memory
 * store), a handler that takes `handlerMs` (a timer: it waits, as a handler calling an API or a database does, and
 * uses no CPU), and, in queue mode, the engine's queue.
 */
import { createReceiver, type EventQueue, type Receiver } from '@kyb-webhooks/core';
import { setTimeout as sleep } from 'node:timers/promises';
import { benchNow } from '../clock.js';
import type { ReceiverConfig } from '../receiver.js';

export interface HandledEvent {
  streamId: string;
  seq: number;
}

export function createQueueBenchReceiver(
  config: ReceiverConfig,
  handlerMs: number,
  queue?: EventQueue,
  onHandled?: (event: HandledEvent) => void,
): Receiver {
  const receiver = createReceiver({
    secrets: config.secrets,
    attestation: { issuer: config.issuer, audience: config.audience, jwks: config.jwks },
    now: benchNow,
    ...(queue ? { queue } : {}),
  });
  return receiver.on('kyb.data_request.pending_approval', async (event) => {
    await sleep(handlerMs);
    onHandled?.({ streamId: event.stream_id, seq: event.seq });
  });
}
