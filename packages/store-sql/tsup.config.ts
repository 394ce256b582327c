import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.shared.js';

// One entry per dialect, so `@kyb-webhooks/store-sql/sqlite` carries no Postgres or MySQL code. The drivers stay
// external: the stores only type them structurally, and better-sqlite3 is imported lazily when a file is opened.
export default defineConfig(
  packageBuild(
    { index: 'src/index.ts', postgres: 'src/postgres.ts', mysql: 'src/mysql.ts', sqlite: 'src/sqlite.ts' },
    { platform: 'node', external: ['pg', 'mysql2', 'mysql2/promise', 'better-sqlite3'] },
  ),
);
