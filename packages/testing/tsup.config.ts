import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.shared.js';

// This kit runs in Node test processes, never in a browser bundle; vitest is a peer dependency and stays external.
// One entry per package.json export.
export default defineConfig(
  packageBuild(
    {
      index: 'src/index.ts',
      'store-suite': 'src/store-suite/index.ts',
      'queue-suite': 'src/queue-suite/index.ts',
      'adapter-suite': 'src/adapter-suite/index.ts',
    },
    { platform: 'node' },
  ),
);
