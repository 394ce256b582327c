import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.shared.js';

// pg-boss is the user's own instance (a peer dependency): never bundled, only the shape this queue calls is typed.
export default defineConfig(packageBuild({ index: 'src/index.ts' }, { platform: 'node', external: ['pg-boss'] }));
