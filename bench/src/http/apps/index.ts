import type { Framework } from '../protocol.js';
import type { StartApp } from './types.js';

/** Loaded on demand so a server process only loads its own framework. */
export const apps: Record<Framework, () => Promise<StartApp>> = {
  express: async () => (await import('./express.js')).start,
  fastify: async () => (await import('./fastify.js')).start,
  koa: async () => (await import('./koa.js')).start,
  hono: async () => (await import('./hono.js')).start,
};
