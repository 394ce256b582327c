import { defineConfig } from 'tsup';

// node:http and node:crypto stay external: this kit runs in Node test processes, never in a browser bundle.
// vitest is a peer dependency, so tsup leaves it external too. One entry per package.json export.
export default defineConfig({
  entry: { index: 'src/index.ts', 'store-suite': 'src/store-suite/index.ts', 'adapter-suite': 'src/adapter-suite/index.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'es2022',
  platform: 'node',
});
