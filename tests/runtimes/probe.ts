import { appendFileSync } from 'node:fs';

// A vitest setup file for the runtime runs: records which runtime the test worker really is, so the runner can tell
// a suite that ran on Bun or Deno from one that silently fell back to a Node child process.
const file = process.env['KYB_RUNTIME_PROBE'];
if (file) {
  const versions = process.versions as Record<string, string | undefined>;
  const runtime = versions['bun']
    ? `bun ${versions['bun']}`
    : versions['deno']
      ? `deno ${versions['deno']}`
      : `node ${process.versions.node}`;
  appendFileSync(file, `${runtime}\n`);
}
