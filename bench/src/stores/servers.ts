/**
 * The Redis and PostgreSQL servers of the bench's sections (and MariaDB for a section that asks for it): the test
 * harness's own definitions (scripts/services/), installed when missing as the test run installs them, and started
 * on free ports of 127.0.0.1 in a temp dir, unless KYB_BENCH_REDIS_URL / KYB_BENCH_POSTGRES_URL / KYB_BENCH_MYSQL_URL
 * point at running servers. Started servers are stopped by PID when the section ends, also on error, and killed by
 * an 'exit' or signal handler if the process ends before that.
 */
import { rmSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installMissing } from '../../../scripts/services/binaries.js';
import { mariadb } from '../../../scripts/services/mariadb.js';
import { postgres } from '../../../scripts/services/postgres.js';
import { signal } from '../../../scripts/services/process.js';
import { redis } from '../../../scripts/services/redis.js';
import { startService, type ServiceDefinition, type StartedService } from '../../../scripts/services/service.js';

export type ServerName = 'redis' | 'postgres' | 'mysql';

/** A server to benchmark against, or why there is none. */
export type Server =
  | { url: string; external: boolean; startMs?: number; skipReason?: undefined }
  | { url?: undefined; skipReason: string };

export interface Servers {
  /** A temp dir for this run (data directories, the SQLite file); deleted by `stop`. */
  root: string;
  redis: Server;
  postgres: Server;
  /** MariaDB: skipped unless asked for in `startServers`. */
  mysql: Server;
  /** Stop what was started (by PID) and delete the temp dir. Idempotent. */
  stop(): Promise<void>;
}

const SOURCES: Record<ServerName, { definition: ServiceDefinition; envVar: string }> = {
  redis: { definition: redis, envVar: 'KYB_BENCH_REDIS_URL' },
  postgres: { definition: postgres, envVar: 'KYB_BENCH_POSTGRES_URL' },
  mysql: { definition: mariadb, envVar: 'KYB_BENCH_MYSQL_URL' },
};

/** Starts the servers named in `names` (Redis and PostgreSQL unless told otherwise); the others are skipped. */
export async function startServers(
  progress: (line: string) => void,
  names: readonly ServerName[] = ['redis', 'postgres'],
): Promise<Servers> {
  const root = await mkdtemp(join(tmpdir(), 'kyb-bench-stores-'));
  // The PostgreSQL data dir is chowned to the postgres user when running as root, who must traverse the root.
  await chmod(root, 0o755);
  const started: StartedService[] = [];

  // Last resort when the process ends without reaching `stop` ('exit' handlers must be synchronous: kill hard).
  const killAll = (): void => {
    for (const service of started) signal(service.process.pid, 'SIGKILL');
    rmSync(root, { recursive: true, force: true });
  };
  const onSignal = (name: NodeJS.Signals): void => {
    killAll();
    process.exit(name === 'SIGINT' ? 130 : 143);
  };
  process.once('exit', killAll);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  const start = async (name: ServerName): Promise<Server> => {
    const { definition, envVar } = SOURCES[name];
    if (!names.includes(name)) return { skipReason: `${definition.title} was not asked for` };
    const url = process.env[envVar];
    if (url) return { url, external: true };
    progress(`starting ${definition.title}`);
    try {
      const service = await startService(definition, root);
      started.push(service);
      return { url: service.url, external: false, startMs: service.ms };
    } catch (error) {
      const reason = String((error as Error)?.message ?? error).split('\n')[0]!;
      return { skipReason: `${definition.title} could not start (${reason}); set ${envVar} to use a running server` };
    }
  };

  // As the test run does: the servers asked for and not given by URL are installed with one apt-get run when missing
  // (as root on Debian, unless KYB_TEST_NO_INSTALL=1), so the bench command works on a fresh machine.
  const toStart = names.filter((name) => !process.env[SOURCES[name].envVar]);
  await installMissing(
    toStart.map((name) => SOURCES[name].definition),
    [],
    progress,
  );
  const [redisServer, postgresServer, mysqlServer] = await Promise.all([
    start('redis'),
    start('postgres'),
    start('mysql'),
  ]);
  let stopped = false;
  return {
    root,
    redis: redisServer,
    postgres: postgresServer,
    mysql: mysqlServer,
    async stop() {
      if (stopped) return;
      stopped = true;
      try {
        await Promise.all(started.map((service) => service.process.stop()));
        await rm(root, { recursive: true, force: true });
      } finally {
        process.removeListener('exit', killAll);
        process.removeListener('SIGINT', onSignal);
        process.removeListener('SIGTERM', onSignal);
      }
    },
  };
}
