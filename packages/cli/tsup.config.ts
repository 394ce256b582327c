import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.shared.js';

// A command, not a library: ESM only, with the shebang npx needs.
export default defineConfig(
  packageBuild({ cli: 'src/cli.ts' }, { format: ['esm'], dts: false, banner: { js: '#!/usr/bin/env node' } }),
);
