/**
 * The READMEs' quick starts where a user pastes them: each ```ts quickstart block of README.md and
 * packages/*\/README.md, written as server.ts (beside its README's receiver.ts) into a folder where the tarballs are
 * installed with npm (./global-setup.ts), one CommonJS (`npm init -y`) and one `"type": "module"`. Then the README's
 * three commands, run by the installed CLI: `npx kyb-webhooks keys --export`, `npx tsx server.ts` with those variables
 * on a free port of 127.0.0.1, `npx kyb-webhooks send data_request.released --to …`: the delivery must be answered 200
 * and the quick start's handler must print the request.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { allReadmeBlocks, describeBlock, REPO_ROOT, type ReadmeBlock } from '../docs/readme-blocks.js';
import { FLAVOURS, npmEnv } from './global-setup.js';

const install = inject('tarballs');
const blocks = allReadmeBlocks();
const quickstarts = blocks.filter(
  (block) => block.kind === 'quickstart' && (block.readme === 'README.md' || block.readme.startsWith('packages/')),
);

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `npx <args>` in `cwd`, to the end. */
function npx(args: string[], cwd: string, env: NodeJS.ProcessEnv = npmEnv()): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn('npx', args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A free TCP port on 127.0.0.1 (released at once; the server or the CLI binds it moments later). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Stops a detached child and everything it started (npx → tsx → node), by its process group. */
async function stopGroup(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    return;
  }
  const timer = setTimeout(() => {
    try {
      process.kill(-(child.pid as number), 'SIGKILL');
    } catch {}
  }, 5_000);
  await closed;
  clearTimeout(timer);
}

/** Writes the block as server.ts, with its README's `file=` modules beside it, in a folder of its own under `dir`. */
function writeQuickstart(block: ReadmeBlock, dir: string): string {
  const folder = join(dir, `${block.readme.replace(/[^\w]+/g, '-')}-L${block.line}`);
  mkdirSync(folder, { recursive: true });
  for (const companion of blocks.filter((b) => b.readme === block.readme && b.kind === 'file'))
    writeFileSync(join(folder, companion.fileName as string), companion.code);
  writeFileSync(join(folder, 'server.ts'), block.code);
  return folder;
}

it('finds the quick starts in the READMEs, and the tarballs of every package', () => {
  expect(quickstarts.filter((block) => block.readme === 'README.md').length).toBeGreaterThanOrEqual(3);
  expect(quickstarts.map((block) => block.readme)).toEqual(
    expect.arrayContaining(['packages/core/README.md', 'packages/express/README.md', 'packages/fastify/README.md']),
  );
  // One per package under packages/, named for its current version: tarballs of an older version fail here.
  const expected = readdirSync(join(REPO_ROOT, 'packages'))
    .map((name) => join(REPO_ROOT, 'packages', name, 'package.json'))
    .filter((manifest) => existsSync(manifest))
    .map(
      (manifest) => JSON.parse(readFileSync(manifest, 'utf8')) as { name: string; version: string; private?: boolean },
    )
    .filter((manifest) => manifest.private !== true)
    .map((manifest) => `${manifest.name.replace(/^@/, '').replace('/', '-')}-${manifest.version}.tgz`)
    .sort();
  expect(install.tarballs).toEqual(expected);
});

describe.skipIf(install.skipped !== undefined).each(FLAVOURS)(
  'the tarballs installed with npm in a %s package',
  (flavour) => {
    describe.concurrent('the README commands against each quick start', () => {
      it.each(quickstarts.map((block) => [describeBlock(block), block] as const))(
        '%s: keys, npx tsx server.ts, send: answered 200 and the handler ran',
        async (_name, block) => {
          const folder = writeQuickstart(block, install.dirs[flavour]);
          // The README's first command, with a JWKS port of this test's own (send serves the JWKS there while it runs).
          const keys = await npx(['kyb-webhooks', 'keys', '--export', '--jwks-port', String(await freePort())], folder);
          expect(keys.code, keys.stderr).toBe(0);
          const variables = Object.fromEntries(
            [...keys.stdout.matchAll(/^export (KYB_[A-Z0-9_]+)=(.*)$/gm)].map((m) => [m[1] as string, m[2] as string]),
          );
          expect(Object.keys(variables)).toContain('KYB_JWKS_URL');

          const port = await freePort();
          const inherited = Object.fromEntries(Object.entries(npmEnv()).filter(([name]) => !name.startsWith('KYB_')));
          const server = spawn('npx', ['tsx', 'server.ts'], {
            cwd: folder,
            env: { ...inherited, ...variables, PORT: String(port), HOST: '127.0.0.1' },
            stdio: ['ignore', 'pipe', 'pipe'],
            detached: true,
          });
          let stdout = '';
          let stderr = '';
          server.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
          server.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
          const report = () => `--- server.ts stdout\n${stdout}\n--- server.ts stderr\n${stderr}`;
          try {
            const deadline = Date.now() + 60_000;
            while (!(await portOpen(port))) {
              if (server.exitCode !== null || server.signalCode !== null)
                throw new Error(
                  `npx tsx server.ts exited (${server.exitCode ?? server.signalCode}) before listening\n${report()}`,
                );
              if (Date.now() > deadline)
                throw new Error(`npx tsx server.ts did not listen on PORT=${port} within 60 s\n${report()}`);
              await sleep(100);
            }
            const send = await npx(
              [
                'kyb-webhooks',
                'send',
                'data_request.released',
                '--to',
                `http://127.0.0.1:${port}${block.path}`,
                '--json',
              ],
              folder,
            );
            let sent: { deliveries?: { status: number | string; stream_id: string }[] } = {};
            try {
              sent = JSON.parse(send.stdout) as typeof sent;
            } catch {} // not JSON: the CLI failed before sending; the expectation below shows its output
            const delivery = sent.deliveries?.[0];
            expect(
              { code: send.code, status: delivery?.status },
              `${send.stdout}\n${send.stderr}\n${report()}`,
            ).toEqual({
              code: 0,
              status: 200,
            });
            // The handler prints the data request's id, which is the release's stream id.
            const printed = Date.now() + 5_000;
            while (!stdout.includes(delivery!.stream_id) && Date.now() < printed) await sleep(50);
            expect(stdout, report()).toContain(delivery!.stream_id);
          } finally {
            await stopGroup(server);
          }
        },
      );
    });
  },
);
