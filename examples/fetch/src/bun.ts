/** The example on Bun: `KYB_SECRET_V1=whsec_… pnpm start:bun` (PORT, default 3000; 0 picks a free port). */
import { createApp } from './app.js';
import { exampleFromEnv } from './config.js';

declare const Bun: {
  env: Record<string, string | undefined>;
  serve(options: { hostname: string; port: number; fetch: (request: Request) => Promise<Response> }): { port: number };
};

const example = exampleFromEnv(Bun.env); // KYB_QUEUE=memory: queue mode, a worker in this process
const app = createApp(example.receiver);
await example.startWorker();
const server = Bun.serve({ hostname: '127.0.0.1', port: Number(Bun.env.PORT ?? 3000), fetch: app });
console.log(`KYB webhooks fetch example on Bun listening on http://127.0.0.1:${server.port}/webhooks/kyb`);
