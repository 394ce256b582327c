/** Ours through `@kyb-webhooks/fastify` in a Fastify app driven by `inject()` (see fastify-inject.ts). */
import { createBenchReceiver } from '../receiver.js';
import { injectAnswer } from './fastify-inject.js';
import type { Answer, ProgramSetup } from './protocol.js';

export function create(setup: ProgramSetup): Promise<Answer> {
  return injectAnswer({ kind: 'adapter', receiver: createBenchReceiver(setup) });
}
