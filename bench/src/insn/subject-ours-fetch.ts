/**
 * Ours through the fetch-style handler (`createFetchHandler`), as a Workers, Bun, Deno or Next.js route runs it. The
 * `Request` is built here, as the runtime would build it before calling the handler.
 */
import { createFetchHandler } from '@kyb-webhooks/core';
import { createBenchReceiver } from '../receiver.js';
import type { Answer, ProgramSetup } from './protocol.js';

export function create(setup: ProgramSetup): Answer {
  const handler = createFetchHandler(createBenchReceiver(setup));
  return async (delivery) => {
    const request = new Request('http://127.0.0.1/webhooks/kyb', {
      method: 'POST',
      headers: delivery.headers,
      body: delivery.body as Uint8Array<ArrayBuffer>,
    });
    // Every fixture delivery is new, so a 200 is a handled event, never a duplicate.
    return (await handler(request)).status;
  };
}
