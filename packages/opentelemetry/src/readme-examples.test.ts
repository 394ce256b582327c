// The README's two examples, run as a user runs them: each block is written to a file as it stands in the README,
// started in its own process (tsx), and sent a signed, attested release. The console quick start must print the
// delivery's span tree; the OTLP example must send its spans and metrics to an OTLP/HTTP endpoint on 127.0.0.1 (a
// small receiver here: no OpenTelemetry Collector ships on npm or Debian) when it is stopped with SIGTERM.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createTestSigner,
  randomSecret,
  startJwksServer,
  testStream,
  type JwksServer,
  type TestSigner,
} from '@kyb-webhooks/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const PACKAGE_DIR = dirname(dirname(fileURLToPath(import.meta.url)));
const RUN_DIR = join(PACKAGE_DIR, '.tmp', `readme-examples-${process.pid}`);
const SECRET = randomSecret();

/** The first ```ts block after the README heading `heading`. */
function readmeBlock(heading: string): string {
  const readme = readFileSync(join(PACKAGE_DIR, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf(`\n## ${heading}\n`));
  const match = /\n```ts\n([\s\S]*?)\n```\n/.exec(section);
  if (!match) throw new Error(`README.md has no ts block under "## ${heading}"`);
  return match[1]!;
}

/**
 * Starts the block with a harness that delivers one signed, attested release to its `receiver` and prints the
 * answer as `ANSWER {json}`; resolves with the process once it printed that.
 */
async function startExample(name: string, block: string, env: Record<string, string>) {
  const dir = join(RUN_DIR, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'example.ts'), block);
  const [released] = testStream(['kyb.data_request.released']);
  const delivery = await signer.sign(await signer.withAttestation(released!));
  writeFileSync(
    join(dir, 'run.ts'),
    [
      "import { receiver } from './example.ts'",
      `const delivery = ${JSON.stringify({ headers: delivery.headers, body: Buffer.from(delivery.body).toString('base64') })}`,
      "const answer = await receiver.receive({ method: 'POST', headers: delivery.headers, body: Buffer.from(delivery.body, 'base64') })",
      "console.log('ANSWER ' + JSON.stringify({ status: answer.status, code: answer.code }))",
      'setInterval(() => {}, 1000) // stays up, as a server would, until SIGTERM',
    ].join('\n'),
  );
  const child = spawn(process.execPath, ['--conditions=@kyb-webhooks/source', '--import', 'tsx', 'run.ts'], {
    cwd: dir,
    env: {
      ...process.env,
      KYB_SECRET_V1: SECRET,
      KYB_ATTESTATION_ISSUER: signer.issuer,
      KYB_AUDIENCE: signer.audience,
      KYB_JWKS_URL: jwks.url,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const answer = await new Promise<{ status: number; code?: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within 60 s:\n${output}`)), 60_000);
    child.stdout!.on('data', () => {
      const line = /ANSWER (\{.*\})/.exec(output)?.[1];
      if (line) {
        clearTimeout(timer);
        resolve(JSON.parse(line) as { status: number; code?: string });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the example exited (${code}) before answering:\n${output}`));
    });
  });
  return { child, answer, output: () => output, released: released! };
}

function exited(child: ChildProcess): Promise<number | null> {
  return child.exitCode !== null ? Promise.resolve(child.exitCode) : new Promise((r) => child.once('exit', r));
}

/** An OTLP/HTTP (JSON) endpoint: what a Collector receives on port 4318, kept by path. */
async function startOtlpReceiver() {
  const received: { path: string; body: unknown }[] = [];
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      received.push({ path: request.url ?? '', body: JSON.parse(body || '{}') as unknown });
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, received, close: () => new Promise((r) => server.close(r)) };
}

let signer: TestSigner;
let jwks: JwksServer;
const children: ChildProcess[] = [];

beforeAll(async () => {
  signer = await createTestSigner({ secrets: { '1': SECRET } });
  jwks = await startJwksServer(signer.jwks);
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  await jwks.close();
  rmSync(RUN_DIR, { recursive: true, force: true });
});

describe('the README examples', () => {
  it('the quick start prints the delivery span and its children to the console', async () => {
    const example = await startExample('console', readmeBlock('Quick start'), {});
    expect(example.answer).toEqual({ status: 200 });
    const deadline = Date.now() + 10_000;
    while (!example.output().includes("name: 'process kyb.data_request.released'") && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const output = example.output();
    expect(output).toContain(`released ${example.released.data.request_id}`);
    for (const span of [
      'process kyb.data_request.released',
      'GET /.well-known/kyb-jwks.json',
      'claim',
      'handler <anonymous>',
      'complete',
    ]) {
      expect(output).toContain(`name: '${span}'`);
    }
    expect(output).not.toContain(SECRET);
    example.child.kill('SIGTERM');
    await exited(example.child);
  }, 90_000);

  it('the OTLP example sends its spans and metrics to the endpoint when stopped', async () => {
    const otlp = await startOtlpReceiver();
    try {
      const example = await startExample('otlp', readmeBlock('Exporting over OTLP'), {
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      });
      expect(example.answer).toEqual({ status: 200 });
      example.child.kill('SIGTERM');
      expect(await exited(example.child)).toBe(0);
      const traces = otlp.received.filter((entry) => entry.path === '/v1/traces');
      const metrics = otlp.received.filter((entry) => entry.path === '/v1/metrics');
      const exported = JSON.stringify(otlp.received);
      const spanNames = [...exported.matchAll(/"name":"([^"]+)","kind"/g)].map((match) => match[1]);
      expect(traces.length).toBeGreaterThan(0);
      expect(spanNames).toEqual(
        expect.arrayContaining([
          'process kyb.data_request.released',
          'GET /.well-known/kyb-jwks.json',
          'handler <anonymous>',
        ]),
      );
      expect(metrics.length).toBeGreaterThan(0);
      for (const metric of ['kyb.webhook.deliveries', 'kyb.webhook.process.duration', 'kyb.webhook.jwks.fetches']) {
        expect(exported).toContain(`"name":"${metric}"`);
      }
      expect(exported).toContain('"scope":{"name":"@kyb-webhooks/opentelemetry"');
      expect(exported).not.toContain(SECRET);
    } finally {
      await otlp.close();
    }
  }, 90_000);
});
