/** One request before measuring, so a broken endpoint is reported instead of timed. */
import type { SignedDelivery } from '@kyb-webhooks/testing';
import type { ServerHandle } from './child.js';
import { withStripeHeader } from './load.js';
import { STRIPE_HEADER } from './protocol.js';

const flip = (signature: string): string =>
  signature.replace(/v1=([0-9a-f])/, (_match, digit: string) => `v1=${digit === '0' ? '1' : '0'}`);

/** The MAC of both schemes' headers altered, so whichever header an endpoint reads no longer matches. */
function tampered(headers: Record<string, string>): Record<string, string> {
  return {
    ...headers,
    'service-kyb-signature': flip(headers['service-kyb-signature']!),
    [STRIPE_HEADER]: flip(headers[STRIPE_HEADER]!),
  };
}

async function post(
  server: ServerHandle,
  path: string,
  headers: Record<string, string>,
  body: Uint8Array<ArrayBuffer>,
): Promise<number> {
  const response = await fetch(`http://127.0.0.1:${server.port}${path}`, { method: 'POST', headers, body });
  await response.arrayBuffer();
  return response.status;
}

/** Problems found, empty when the server answers like its variant should. */
export async function probe(
  server: ServerHandle,
  path: string,
  deliveries: readonly SignedDelivery[],
): Promise<string[]> {
  const problems: string[] = [];
  for (const delivery of deliveries) {
    const headers = withStripeHeader(delivery.headers);
    const status = await post(server, path, headers, delivery.body);
    if (status !== 200) problems.push(`${delivery.envelope.event}: ${status} instead of 200`);
    const forged = await post(server, path, tampered(headers), delivery.body);
    if (forged !== 401) problems.push(`${delivery.envelope.event} with a wrong MAC: ${forged} instead of 401`);
  }
  return problems;
}
