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

/**
 * Creates the durable log the ordered workers append to: a PostgreSQL table `<namespace>_log` whose serial id keeps
 * the order of the appends; Redis needs nothing (a list).
 */
export async function prepareLog(kind: 'redis' | 'postgres', url: string, namespace: string): Promise<void> {
  if (kind !== 'postgres') return;
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  try {
    await pool.query(`CREATE TABLE IF NOT EXISTS ${namespace}_log (id BIGSERIAL PRIMARY KEY, entry TEXT NOT NULL)`);
  } finally {
    await pool.end();
  }
}

/** One handler run as an ordered worker logged it. */
export interface LoggedRun {
  streamId: string;
  seq: number;
  eventId: string;
  fetched: boolean;
  pid: number;
}

/** The durable log, in the order the handlers appended to it. */
export async function readLog(kind: 'redis' | 'postgres', url: string, namespace: string): Promise<LoggedRun[]> {
  let lines: string[];
  if (kind === 'redis') {
    const { default: Redis } = await import('ioredis');
    const client = new Redis(url);
    try {
      lines = await client.lrange(`${namespace}_log`, 0, -1);
    } finally {
      client.disconnect();
    }
  } else {
    const { default: pg } = await import('pg');
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    try {
      lines = (await pool.query<{ entry: string }>(`SELECT entry FROM ${namespace}_log ORDER BY id`)).rows.map(
        (row) => row.entry,
      );
    } finally {
      await pool.end();
    }
  }
  return lines.map((line) => JSON.parse(line) as LoggedRun);
}
