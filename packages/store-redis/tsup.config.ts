import { defineConfig } from 'tsup';

// The Redis client is the user's own (ioredis or node-redis): never bundled, only its shape is typed.
export default defineConfig({
  entry: { index: 'src/index.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'es2022',
  platform: 'node',
  external: ['ioredis', 'redis', '@kyb-webhooks/core'],
});
