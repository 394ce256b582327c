/**
 * The benchmarks: `pnpm bench` from the root, or `pnpm --filter @kyb-webhooks/bench run bench [-- flags]`.
 *   --only <section>   run one section: micro | http | stores | streams | insn | scale | queue
 *   --quick            a short smoke run (rough figures, under a minute)
 *   --framework <name> the HTTP section for this framework only (repeatable): express | fastify | koa | hono
 *   --insn-case <name> the insn section for this case only (repeatable): a subject (`ours-otel-noop`), or
 *                      `<subject>:<kind>` (`ours:hmac`); see CASES in src/insn/index.ts
 *   --insn-node <line> the insn section on this Node line (repeatable): this | 22 | 24 | 26 (default: this and 26;
 *                      --quick: this); 22, 24 and 26 are the binaries pinned in tests/runtimes, installed when missing
 * Speed is reported as ratios against baselines measured in the same run; these are not tests and CI does not run
 * them. The report goes to stdout, progress to stderr.
 */
import { parseArgs } from 'node:util';
import { staleBuilds } from './dist.js';
import { httpSection } from './http/index.js';
import { insnSection } from './insn/index.js';
import { NODE_LINES, type NodeLineName } from './insn/node-lines.js';
import { FRAMEWORKS, type Framework } from './http/protocol.js';
import { microSection } from './micro/index.js';
import { queueSection } from './queue/index.js';
import { scaleSection } from './scale/index.js';
import type { BenchOptions, Section } from './section.js';
import { storeSection } from './stores/index.js';
import { streamSection } from './streams/index.js';

// A later store section (bench/src/stores/index.ts exporting a `Section`) is added here.
const sections: Section[] = [
  microSection,
  httpSection,
  storeSection,
  streamSection,
  insnSection,
  scaleSection,
  queueSection,
];

const { values } = parseArgs({
  args: process.argv.slice(2).filter((arg) => arg !== '--'),
  options: {
    only: { type: 'string' },
    quick: { type: 'boolean', default: false },
    framework: { type: 'string', multiple: true },
    'insn-case': { type: 'string', multiple: true },
    'insn-node': { type: 'string', multiple: true },
  },
});
const selected = values.only === undefined ? sections : sections.filter((section) => section.name === values.only);
if (selected.length === 0) {
  console.error(`--only ${values.only}: no such section (${sections.map((section) => section.name).join(', ')})`);
  process.exit(2);
}

const unknownFrameworks = (values.framework ?? []).filter((name) => !(FRAMEWORKS as readonly string[]).includes(name));
if (unknownFrameworks.length > 0) {
  console.error(`--framework ${unknownFrameworks.join(', ')}: no such framework (${FRAMEWORKS.join(', ')})`);
  process.exit(2);
}

// Every section imports the built packages (dist), the code users install; a stale build would measure old code.
const stale = staleBuilds([
  'core',
  'client',
  'testing',
  'node',
  'express',
  'fastify',
  'koa',
  'hono',
  'store-redis',
  'store-sql',
  'queue-pgboss',
  'queue-bullmq',
  'opentelemetry',
]);
if (stale.length > 0) {
  console.error(`${stale.join('; ')}: run \`pnpm build\` first (\`npm run bench\` builds before it measures).`);
  process.exit(2);
}

const unknownLines = (values['insn-node'] ?? []).filter((name) => !(NODE_LINES as readonly string[]).includes(name));
if (unknownLines.length > 0) {
  console.error(`--insn-node ${unknownLines.join(', ')}: no such Node line (${NODE_LINES.join(', ')})`);
  process.exit(2);
}

const started = Date.now();
const options: BenchOptions = {
  quick: values.quick ?? false,
  ...(values.framework ? { frameworks: values.framework as Framework[] } : {}),
  ...(values['insn-case'] ? { insnCases: values['insn-case'] } : {}),
  ...(values['insn-node'] ? { insnNodes: values['insn-node'] as NodeLineName[] } : {}),
  progress: (line) => process.stderr.write(`  · ${line} (${((Date.now() - started) / 1000).toFixed(0)} s)\n`),
};
console.log(
  `kyb-webhooks bench${options.quick ? ' --quick (smoke run: rough figures)' : ''} · Node ${process.version} · ` +
    `${(await import('node:os')).availableParallelism()} CPUs · ${new Date().toISOString()}`,
);
for (const section of selected) {
  process.stderr.write(`› ${section.title}\n`);
  const report = await section.run(options);
  console.log(`\n${report}`);
}
console.log(`\ndone in ${((Date.now() - started) / 1000).toFixed(0)} s`);
