/** Creates the shared store's table (SQL) before the fleet starts; Redis needs nothing. */
export async function prepareStore(kind: 'redis' | 'postgres', url: string, namespace: string): Promise<void> {
  if (kind !== 'postgres') return;
  const { default: pg } = await import('pg');
  const { createPostgresStore } = await import('@kyb-webhooks/store-sql/postgres');
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  try {
    await createPostgresStore({ pool, table: namespace }).ensureSchema();
  } finally {
    await pool.end();
  }
}
