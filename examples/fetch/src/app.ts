import { createFetchHandler, type Receiver } from '@kyb-webhooks/core';

/**
 * The example app as one fetch-style handler, `(request: Request) => Promise<Response>`: the same function serves
 * Bun.serve (./bun.ts), Deno.serve (./deno.ts), a Cloudflare Worker (`export default { fetch }`) or a Next.js route
 * handler (`export const POST = createFetchHandler(receiver)`). Web-standard APIs only. What the handlers do is
 * recorded with `record` (the console by default); a real app writes to its database there.
 */
export function createApp(
  receiver: Receiver,
  record: (line: string) => void = console.log,
): (request: Request) => Promise<Response> {
  receiver
    .on('kyb.data_request.released', (event, { answers }) => {
      // Released answers are keyed by subject and name together: two directors are two answers.
      record(`released ${event.data.request_id}: ${answers.size} answers from ${answers.subjects().length} subjects`);
    })
    .on('kyb.data_request.refused', (event) => {
      record(`refused ${event.data.request_id}: ${event.data.reason}`);
    })
    .onUnknown((event) => {
      record(`verified event of a type this version does not know: ${event.event}`);
    });
  const webhooks = createFetchHandler(receiver);
  return async (request) => {
    const { pathname } = new URL(request.url);
    if (pathname === '/webhooks/kyb') return webhooks(request);
    if (pathname === '/health') return Response.json({ ok: true });
    return Response.json({ error: 'not found' }, { status: 404 });
  };
}
