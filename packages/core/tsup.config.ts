import { defineConfig } from 'tsup';

// "#crypto" stays external: the consumer's resolver picks node:crypto or Web Crypto through package.json "imports".
export default defineConfig([
  {
    entry: { index: 'src/index.ts' },
    format: ['esm', 'cjs'],
    dts: true,
    sourcemap: true,
    clean: true,
    target: 'es2022',
    external: ['#crypto'],
  },
  {
    entry: { 'crypto-node': 'src/crypto/node.ts', 'crypto-web': 'src/crypto/web.ts' },
    format: ['esm', 'cjs'],
    dts: false,
    sourcemap: true,
    target: 'es2022',
    platform: 'neutral',
    external: ['node:crypto'],
  },
]);
