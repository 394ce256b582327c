import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.shared.js';

export default defineConfig(
  packageBuild({
    index: 'src/index.ts',
    express: 'src/express.ts',
    fastify: 'src/fastify.ts',
    koa: 'src/koa.ts',
    hono: 'src/hono.ts',
    testing: 'src/testing/index.ts',
  }),
);
