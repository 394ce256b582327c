import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { findBinary } from './binaries.js';
import { run, startProcess } from './process.js';
import type { ServiceDefinition } from './service.js';

/**
 * MariaDB 10.11 (the MySQL-compatible server Debian ships) in a throw-away data directory. An init file creates the
 * test database and a user with a random password, so no client binary is needed and root keeps socket-only login.
 */
export const mariadb: ServiceDefinition = {
  name: 'mysql',
  title: 'MariaDB',
  envVar: 'KYB_TEST_MYSQL_URL',
  aptPackage: 'mariadb-server',
  locate() {
    const server = findBinary('mariadbd');
    const install = findBinary('mariadb-install-db') ?? findBinary('mysql_install_db');
    if (server && install) return { ok: true, binaries: { server, install } };
    return { ok: false, missing: 'mariadbd/mariadb-install-db are not installed' };
  },
  async start(binaries, dir, port) {
    const data = join(dir, 'data');
    const asRoot = process.getuid?.() === 0;
    const user = asRoot ? ['--user=root'] : [];
    await run(
      binaries.install!,
      ['--no-defaults', `--datadir=${data}`, ...user, '--skip-test-db', '--skip-name-resolve'],
      {
        label: 'mariadb-install-db',
      },
    );
    const password = randomBytes(12).toString('hex');
    const initFile = join(dir, 'init.sql');
    await writeFile(
      initFile,
      [
        'CREATE DATABASE IF NOT EXISTS kyb_test;',
        `CREATE USER IF NOT EXISTS 'kyb'@'%' IDENTIFIED BY '${password}';`,
        "GRANT ALL PRIVILEGES ON *.* TO 'kyb'@'%';",
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
    const server = await startProcess({
      label: 'mariadbd',
      command: binaries.server!,
      args: [
        '--no-defaults',
        `--datadir=${data}`,
        `--port=${port}`,
        '--bind-address=127.0.0.1',
        `--socket=${join(dir, 'mysqld.sock')}`,
        `--pid-file=${join(dir, 'mysqld.pid')}`,
        `--init-file=${initFile}`,
        ...user,
        '--skip-name-resolve',
        '--skip-log-bin',
        '--max-connections=400',
        '--innodb-buffer-pool-size=64M',
        '--innodb-flush-log-at-trx-commit=0',
        '--innodb-doublewrite=0',
      ],
      ready: /ready for connections/,
      // The data directory is deleted afterwards, so a clean InnoDB shutdown would only cost time.
      stopSignal: 'SIGKILL',
      timeoutMs: 30_000,
    });
    return { url: `mysql://kyb:${password}@127.0.0.1:${port}/kyb_test`, process: server };
  },
};
