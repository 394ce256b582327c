/** The hand-written receiver (`../http/baseline.ts`) in the same Fastify app, driven by `inject()` (fastify-inject.ts). */
import { createHandwrittenReceiver } from '../http/baseline.js';
import { injectAnswer } from './fastify-inject.js';
import type { Answer, ProgramSetup } from './protocol.js';

export function create(setup: ProgramSetup): Promise<Answer> {
  const answer = createHandwrittenReceiver(setup.secrets, { keyPerRequest: false });
  return injectAnswer({ kind: 'manual', header: 'service-kyb-signature', answer, peer: false });
}
