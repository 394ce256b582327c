import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.shared.js';

// The Redis client is the user's own (ioredis or node-redis): never bundled, only its shape is typed.
export default defineConfig(
  packageBuild({ index: 'src/index.ts' }, { platform: 'node', external: ['ioredis', 'redis'] }),
);
