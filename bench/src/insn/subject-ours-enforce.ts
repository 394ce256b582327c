/**
 * Ours with ordering `enforce` on the default memory store, configured as the other benches' receiver otherwise: each
 * delivery reads its stream's cursor, is claimed and completes in order. The fixture is one stream without gaps, so
 * the fetcher is never called.
 */
import { streamOrdering } from '@kyb-webhooks/core';
import { createBenchReceiver } from '../receiver.js';
import type { Answer, ProgramSetup } from './protocol.js';

export function create(setup: ProgramSetup): Answer {
  const receiver = createBenchReceiver(
    setup,
    undefined,
    streamOrdering({
      mode: 'enforce',
      fetchEventsAfter: () => {
        throw new Error('the bench stream has no gap: nothing to fetch');
      },
    }),
  );
  return async (delivery) =>
    (await receiver.receive({ method: 'POST', headers: delivery.headers, body: delivery.body })).status;
}
