/**
 * The HTTP server of the queue section's answer measurement, run as a child process:
 *   node --import tsx bench/src/queue/server.ts <inline|pgboss|bullmq>   (imports the built packages)
 * `http.createServer` with `@kyb-webhooks/node`'s handler, as the package's README shows it; inline, the answer waits
 * for the 50 ms handler; in queue mode the receiver answers `200 queued` once the engine holds the event, and no
 * worker runs in this process (the fleet is measured apart). Configuration in `KYB_BENCH_QUEUE`, the clock in
 * `KYB_BENCH_NOW_MS`. Listens on a free 127.0.0.1 port, reports it over IPC, answers `cpu` messages, and exits when
 * the parent disconnects.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { kybWebhooks } from '@kyb-webhooks/node';
import { WEBHOOK_PATH } from '../http/protocol.js';
import { openQueue, type OpenedQueue } from './engines.js';
import type { ChildConfig, ChildMessage, ParentMessage, ServerMode } from './protocol.js';
import { createQueueBenchReceiver } from './receiver.js';

const send = (message: ChildMessage): void => {
  process.send?.(message);
};

async function main(): Promise<void> {
  const mode = process.argv[2] as ServerMode;
  const raw = process.env['KYB_BENCH_QUEUE'];
  if (!raw) throw new Error('KYB_BENCH_QUEUE is not set; the queue section starts this process');
  const config = JSON.parse(raw) as ChildConfig;
  if (mode !== 'inline' && config.queue?.engine !== mode) throw new Error(`usage: server.ts <inline|pgboss|bullmq>`);
  let opened: OpenedQueue | undefined;
  if (config.queue) opened = await openQueue(config.queue);
  const webhooks = kybWebhooks(createQueueBenchReceiver(config.receiver, config.handlerMs, opened?.queue));
  const server = createServer((req, res) => {
    if (req.url === WEBHOOK_PATH) return void webhooks(req, res);
    res.writeHead(404).end();
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.on('message', (message: ParentMessage) => {
    if (message.type === 'cpu') send({ type: 'cpu', id: message.id, ...process.cpuUsage() });
  });
  process.on('disconnect', () => {
    server.close();
    server.closeAllConnections();
    void (opened?.close() ?? Promise.resolve()).finally(() => process.exit(0));
    setTimeout(() => process.exit(0), 5_000).unref();
  });
  send({ type: 'ready', port: (server.address() as AddressInfo).port });
}

main().catch((error: unknown) => {
  send({ type: 'error', message: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
  process.exitCode = 1;
  process.disconnect?.();
});
