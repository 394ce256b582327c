/** The example on Deno: `KYB_SECRET_V1=whsec_… pnpm start:deno` (PORT, default 3000; 0 picks a free port). */
import { createApp } from './app.js';
import { exampleFromEnv } from './config.js';

declare const Deno: {
  env: { toObject(): Record<string, string> };
  serve(
    options: { hostname: string; port: number; onListen: (address: { port: number }) => void },
    handler: (request: Request) => Promise<Response>,
  ): unknown;
};

const env = Deno.env.toObject();
const example = exampleFromEnv(env); // KYB_QUEUE=memory: queue mode, a worker in this process
const app = createApp(example.receiver);
await example.startWorker();
Deno.serve(
  {
    hostname: '127.0.0.1',
    port: Number(env.PORT ?? 3000),
    onListen: ({ port }) =>
      console.log(`KYB webhooks fetch example on Deno listening on http://127.0.0.1:${port}/webhooks/kyb`),
  },
  app,
);
