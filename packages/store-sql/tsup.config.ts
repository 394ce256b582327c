import { defineConfig } from 'tsup';

// One entry per dialect, so `@kyb-webhooks/store-sql/sqlite` carries no Postgres or MySQL code. The drivers stay
// external: the stores only type them structurally, and better-sqlite3 is imported lazily when a file is opened.
export default defineConfig({
  entry: {
    index: 'src/index.ts',
    postgres: 'src/postgres.ts',
    mysql: 'src/mysql.ts',
    sqlite: 'src/sqlite.ts',
  },
  format: ['esm', 'cjs'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'es2022',
  platform: 'node',
  external: ['pg', 'mysql2', 'mysql2/promise', 'better-sqlite3', '@kyb-webhooks/core'],
});
