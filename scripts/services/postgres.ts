import { existsSync, readFileSync } from 'node:fs';
import { chown, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { findBinary, postgresBinDirs } from './binaries.js';
import { run, startProcess } from './process.js';
import type { ServiceDefinition } from './service.js';

/**
 * PostgreSQL 15 in a throw-away cluster: trust authentication on 127.0.0.1 only, and no fsync, because the data
 * lives for one test run. Postgres refuses to run as root, so as root it runs as the `postgres` user (or `nobody`).
 */
export const postgres: ServiceDefinition = {
  name: 'postgres',
  title: 'PostgreSQL',
  envVar: 'KYB_TEST_POSTGRES_URL',
  aptPackage: 'postgresql-15',
  locate() {
    for (const dir of postgresBinDirs()) {
      const server = findBinary('postgres', [dir]);
      const initdb = findBinary('initdb', [dir]);
      // initdb and postgres must come from the same installation, so look in the server's own directory first.
      if (server && initdb) return { ok: true, binaries: { server, initdb } };
    }
    const server = findBinary('postgres');
    const initdb = findBinary('initdb');
    if (server && initdb) return { ok: true, binaries: { server, initdb } };
    return { ok: false, missing: 'postgres/initdb are not installed' };
  },
  async start(binaries, dir, port, options = {}) {
    const user = serverUser();
    const data = join(dir, 'data');
    await mkdir(data, { recursive: true });
    if (user) {
      await chown(dir, user.uid, user.gid);
      await chown(data, user.uid, user.gid);
    }
    const ids = user ? { uid: user.uid, gid: user.gid } : {};
    const env = { ...process.env, LC_ALL: 'C', ...(user ? { HOME: dir, USER: user.name } : {}) };
    // A data directory that holds a cluster already is a restart: the server starts on it as it is.
    if (!existsSync(join(data, 'PG_VERSION'))) {
      await run(
        binaries.initdb!,
        ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync'],
        {
          ...ids,
          env,
          label: 'initdb',
        },
      );
    }
    const server = await startProcess({
      label: 'postgres',
      command: binaries.server!,
      args: [
        '-D',
        data,
        '-h',
        '127.0.0.1',
        '-p',
        String(port),
        '-k',
        dir,
        '-c',
        'fsync=off',
        '-c',
        // Off, a commit is acknowledged before its WAL is written, and an immediate stop can lose it; durable
        // servers are stopped and started again by their tests, so they keep what they acknowledged. (fsync stays
        // off: it guards against a crash of the machine, not of the server.)
        `synchronous_commit=${options.durable ? 'on' : 'off'}`,
        '-c',
        'full_page_writes=off',
        '-c',
        'max_connections=300',
        '-c',
        'shared_buffers=32MB',
      ],
      ...ids,
      env,
      ready: /database system is ready to accept connections/,
      // Immediate shutdown: the cluster is deleted afterwards, so there is nothing to flush.
      stopSignal: 'SIGQUIT',
      timeoutMs: 30_000,
    });
    return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, process: server };
  },
};

/** As root: the `postgres` user if the packages created it, else `nobody`. Otherwise: the current user. */
function serverUser(): { name: string; uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const users = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .map((line) => line.split(':'))
    .filter((fields) => fields.length >= 4);
  for (const name of ['postgres', 'nobody']) {
    const fields = users.find((f) => f[0] === name);
    if (fields) return { name, uid: Number(fields[2]), gid: Number(fields[3]) };
  }
  throw new Error('postgres refuses to run as root and there is neither a `postgres` nor a `nobody` user');
}
