import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.shared.js';

// "#crypto" stays external: the consumer's resolver picks node:crypto or Web Crypto through package.json "imports".
export default defineConfig([
  packageBuild({ index: 'src/index.ts' }, { external: ['#crypto'] }),
  packageBuild(
    { 'crypto-node': 'src/verify/crypto/node.ts', 'crypto-web': 'src/verify/crypto/web.ts' },
    { dts: false, clean: false, platform: 'neutral', external: ['node:crypto'] },
  ),
]);
