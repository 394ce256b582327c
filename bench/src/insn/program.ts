/**
 * The program the instruction-count section runs under `valgrind --tool=callgrind`, once per figure: it reads a
 * fixture, imports one subject, and answers a number of deliveries. Bundled by `build.ts` with every package left
 * external, so importing a subject costs what importing the libraries it uses costs a user, and nothing else.
 * Usage: `node program.mjs '<RunSpec as JSON>'`.
 */
import { readFileSync } from 'node:fs';
import type { Fixture, ProgramDelivery, RunSpec, Subject } from './protocol.js';

const spec = JSON.parse(process.argv[2] ?? '') as RunSpec;
// Read and decoded in every run, measured or not: between two runs of different length, it cancels out.
const fixture = JSON.parse(readFileSync(spec.fixture, 'utf8')) as Fixture;
const deliveries: ProgramDelivery[] = fixture.deliveries.map((delivery) => ({
  headers: delivery.headers,
  body: Buffer.from(delivery.body, 'base64'),
  stripeSignature: delivery.stripeSignature,
}));
if (spec.count > deliveries.length)
  throw new Error(`the fixture holds ${deliveries.length} deliveries, not ${spec.count}`);

if (spec.subject !== 'none') {
  const subject = (await import(new URL(`./subject-${spec.subject}.mjs`, import.meta.url).href)) as Subject;
  if (!spec.importOnly) {
    const answer = await subject.create(fixture.setup, spec.kind);
    for (let i = 0; i < spec.count; i++) {
      const answered = answer(deliveries[i]!);
      const status = typeof answered === 'number' ? answered : await answered;
      if (status !== 200) throw new Error(`${spec.subject} answered delivery ${i} with ${status}, not 200`);
    }
  }
}
