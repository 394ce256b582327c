import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.shared.js';

// One entry per package.json export. "#crypto" stays external: the consumer's resolver picks node:crypto or Web Crypto
// through package.json "imports". Code splitting for CJS too (ESM has it by default): the entries share one copy of
// each module, so a KybWebhookError thrown by a store's checkStreamArguments (./store) is the class `instanceof`
// tests against from the root entry, under require() as under import.
export default defineConfig([
  packageBuild(
    {
      index: 'src/index.ts',
      store: 'src/store.ts',
      adapter: 'src/adapter.ts',
      queue: 'src/queue.ts',
      schemas: 'src/schemas.ts',
    },
    { external: ['#crypto'], splitting: true },
  ),
  packageBuild(
    { 'crypto-node': 'src/verify/crypto/node.ts', 'crypto-web': 'src/verify/crypto/web.ts' },
    { dts: false, clean: false, platform: 'neutral', external: ['node:crypto'] },
  ),
]);
