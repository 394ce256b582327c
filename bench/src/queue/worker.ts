/**
 * One process of the queue section's worker fleet, run as a child process:
 *   node --import tsx bench/src/queue/worker.ts   (imports the built packages)
 * It opens the engine's queue (`KYB_BENCH_QUEUE`), builds the receiver with the 50 ms handler, and waits: `start`
 * runs `createQueueWorker(receiver, { concurrency }).start()`, `stop` its `stop()` (which waits for the running
 * jobs). Every handled event goes back to the parent as [time, stream index, seq], in batches every 50 ms, so the
 * parent counts the fleet's throughput over a window and checks per-stream order and exactly-once.
 */
import { createQueueWorker, type QueueWorker } from '@kyb-webhooks/core';
import { openQueue } from './engines.js';
import { streamIndexOf, type ChildConfig, type ChildMessage, type Handled, type ParentMessage } from './protocol.js';
import { createQueueBenchReceiver } from './receiver.js';

const FLUSH_MS = 50;

const send = (message: ChildMessage): Promise<void> =>
  new Promise((resolve) => {
    if (!process.send) return resolve();
    process.send(message, undefined, undefined, () => resolve());
  });

async function main(): Promise<void> {
  const raw = process.env['KYB_BENCH_QUEUE'];
  if (!raw) throw new Error('KYB_BENCH_QUEUE is not set; the queue section starts this process');
  const config = JSON.parse(raw) as ChildConfig;
  if (!config.queue) throw new Error('the worker needs a queue');
  const opened = await openQueue(config.queue);
  let pending: Handled[] = [];
  const flush = async (): Promise<void> => {
    if (pending.length === 0) return;
    const events = pending;
    pending = [];
    await send({ type: 'handled', events });
  };
  const timer = setInterval(() => void flush(), FLUSH_MS);
  const receiver = createQueueBenchReceiver(config.receiver, config.handlerMs, opened.queue, (event) => {
    pending.push([Date.now(), streamIndexOf(event.streamId), event.seq]);
  });
  let worker: QueueWorker | undefined;
  // One command at a time, in the order they came.
  let chain = Promise.resolve();
  process.on('message', (message: ParentMessage) => {
    chain = chain.then(async () => {
      try {
        if (message.type === 'cpu') {
          await send({ type: 'cpu', id: message.id, ...process.cpuUsage() });
        } else if (message.type === 'start') {
          worker = createQueueWorker(receiver, { concurrency: message.concurrency });
          await worker.start();
          await send({ type: 'started' });
        } else if (message.type === 'stop') {
          await worker?.stop();
          worker = undefined;
          await flush();
          await send({ type: 'stopped' });
        }
      } catch (error) {
        await send({
          type: 'error',
          message: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
        });
      }
    });
  });
  process.on('disconnect', () => {
    clearInterval(timer);
    void (worker?.stop() ?? Promise.resolve()).then(() => opened.close()).finally(() => process.exit(0));
    setTimeout(() => process.exit(0), 10_000).unref();
  });
  await send({ type: 'ready' });
}

main().catch((error: unknown) => {
  void send({
    type: 'error',
    message: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
  }).then(() => {
    process.exitCode = 1;
    process.disconnect?.();
  });
});
