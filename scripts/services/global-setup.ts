/**
 * Vitest globalSetup: starts the database servers the selected store tests need (Redis, PostgreSQL, MariaDB) in
 * parallel on free ports of 127.0.0.1, hands their URLs to the tests through KYB_TEST_<NAME>_URL, and stops them by
 * PID afterwards. A server whose URL the user already set is used as is and nothing is started for it.
 *
 * A server that cannot start fails the run under CI=true; elsewhere its tests are skipped with a message that says
 * how to enable them, so a laptop without MariaDB can still run everything else.
 *
 * Missing binaries are installed with ONE `apt-get install` (redis-server, postgresql-15, mariadb-server, and chromium
 * when a selected test calls launchChromium) when running as root on Debian/Ubuntu, unless KYB_TEST_NO_INSTALL=1. Each server gets its own data directory under one temp
 * folder, deleted at the end. Servers never outlive the run: teardown stops them, an 'exit' handler kills them if
 * teardown never ran, and a detached watchdog (reaper.mjs) stops them if vitest itself is killed.
 */
import { spawn } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { installMissing } from './binaries.js';
import { mariadb } from './mariadb.js';
import { postgres } from './postgres.js';
import { signal } from './process.js';
import { redis } from './redis.js';
import { startService, type ServiceDefinition, type ServiceName, type StartedService } from './service.js';

const DEFINITIONS: readonly ServiceDefinition[] = [redis, postgres, mariadb];
// A test file needs a server when it calls testService('<name>') or reads KYB_TEST_<NAME>_URL itself.
const NEEDS = /testService\(\s*['"](redis|postgres|mysql)['"]|KYB_TEST_(REDIS|POSTGRES|MYSQL)_URL/g;
// The login browser test (packages/login) drives Debian's Chromium; it is installed in the same apt-get run.
const NEEDS_CHROMIUM = /launchChromium\(/;
const CHROMIUM = '/usr/bin/chromium';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const needed = await neededServices(project);
  const todo = DEFINITIONS.filter((d) => needed.has(d.name) && !process.env[d.envVar]);
  const extra = needed.has('chromium') && !existsSync(CHROMIUM) ? ['chromium'] : [];
  if (todo.length === 0) {
    await installMissing([], extra, log);
    return async () => {};
  }

  const ci = isCi();
  const begin = performance.now();
  await installMissing(todo, extra, log);

  const root = await mkdtemp(join(tmpdir(), 'kyb-test-services-'));
  // The servers' own directories are chowned to the postgres user, who must be able to traverse the root.
  await chmod(root, 0o755);
  const started: StartedService[] = [];
  const stateFile = join(root, 'state.json');
  const saveState = (): void =>
    writeFileSync(
      stateFile,
      JSON.stringify({ root, servers: started.map((s) => ({ pid: s.process.pid, signal: s.process.stopSignal })) }),
    );
  saveState();
  const reaper = startReaper(stateFile);
  // Last resort when vitest exits without running the teardown (an uncaught error, process.exit): 'exit' handlers
  // must be synchronous, so kill hard. Signals, even SIGKILL, are covered by the reaper.
  const onExit = (): void => {
    for (const s of started) signal(s.process.pid, 'SIGKILL');
    rmSync(root, { recursive: true, force: true });
    if (reaper) signal(reaper, 'SIGKILL');
  };
  process.once('exit', onExit);

  const results = await Promise.allSettled(
    todo.map(async (definition) => {
      const service = await startService(definition, root);
      started.push(service);
      saveState();
      return service;
    }),
  );

  const failures: string[] = [];
  results.forEach((result, i) => {
    const definition = todo[i]!;
    if (result.status === 'fulfilled') {
      process.env[definition.envVar] = result.value.url;
      log(`${definition.title} ready on 127.0.0.1:${result.value.port} in ${result.value.ms} ms`);
    } else {
      const reason = firstLine(result.reason);
      failures.push(`${definition.title}: ${String((result.reason as Error)?.message ?? result.reason)}`);
      process.env[`${definition.envVar.replace(/_URL$/, '')}_UNAVAILABLE`] = reason;
      if (!ci) {
        log(
          `${definition.title} unavailable (${reason}): its store tests are skipped. Install it ` +
            `(apt-get install ${definition.aptPackage}) or set ${definition.envVar} to a running server.`,
        );
      }
    }
  });

  const teardown = async (): Promise<void> => {
    process.removeListener('exit', onExit);
    await Promise.all(started.map((s) => s.process.stop()));
    await rm(root, { recursive: true, force: true });
    if (reaper) signal(reaper, 'SIGKILL');
  };

  if (ci && failures.length > 0) {
    await teardown();
    throw new Error(`CI=true and test servers could not start:\n${failures.join('\n')}`);
  }
  log(`servers up in ${Math.round(performance.now() - begin)} ms`);
  return teardown;
}

/** Servers referenced by the test files this run selected (`vitest run packages/core` needs none). */
async function neededServices(project: TestProject): Promise<Set<ServiceName | 'chromium'>> {
  const all = new Set<ServiceName | 'chromium'>([...DEFINITIONS.map((d) => d.name), 'chromium']);
  try {
    // The CLI's file filters live on the Vitest instance (`filenamePattern`); config.filters is not filled in yet.
    const filters = (project.vitest as { filenamePattern?: string[] }).filenamePattern ?? project.vitest.config.filters;
    const { testFiles } = await project.globTestFiles(filters);
    const needed = new Set<ServiceName | 'chromium'>();
    for (const file of testFiles) {
      const text = await readFile(file, 'utf8');
      if (NEEDS_CHROMIUM.test(text)) needed.add('chromium');
      for (const match of text.matchAll(NEEDS)) {
        needed.add((match[1] ?? match[2]!.toLowerCase()) as ServiceName);
      }
    }
    return needed;
  } catch {
    return all; // when in doubt start everything: slower, never wrong
  }
}

function startReaper(stateFile: string): number | undefined {
  const script = fileURLToPath(new URL('./reaper.mjs', import.meta.url));
  const child = spawn(process.execPath, [script, String(process.pid), stateFile], { detached: true, stdio: 'ignore' });
  child.unref();
  return child.pid;
}

function isCi(): boolean {
  const value = (process.env.CI ?? '').toLowerCase();
  return value !== '' && value !== '0' && value !== 'false';
}

function firstLine(error: unknown): string {
  return String((error as Error)?.message ?? error).split('\n')[0]!;
}

function log(message: string): void {
  console.log(`[test services] ${message}`);
}
