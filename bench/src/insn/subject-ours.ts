/** Ours: `receiver.receive()` as the benches configure it (both checks, default memory store, no-op handlers). */
import { createBenchReceiver } from '../receiver.js';
import type { Answer, ProgramSetup } from './protocol.js';

export function create(setup: ProgramSetup): Answer {
  const receiver = createBenchReceiver(setup);
  return async (delivery) => {
    // Every fixture delivery is new, so a 200 is a handled event, never a duplicate.
    return (await receiver.receive({ method: 'POST', headers: delivery.headers, body: delivery.body })).status;
  };
}
