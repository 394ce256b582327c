import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.shared.js';

// BullMQ and ioredis are the user's own (peer dependencies): never bundled.
export default defineConfig(
  packageBuild({ index: 'src/index.ts' }, { platform: 'node', external: ['bullmq', 'ioredis'] }),
);
