/** The Stripe-format signature header the `stripe` endpoint reads (apart from peer.ts, which loads Stripe). */

/**
 * The Stripe-format header for a delivery: `t=<t>,v1=<hex>`. Both schemes are HMAC-SHA256 over "<t>." + the body
 * bytes, so with the same secret and t the MAC is the one of Service-KYB-Signature (the bench's unit test checks
 * it against Stripe's own `generateTestHeaderString`); the peer still computes it itself on every request.
 *
 * @example
 * ```ts
 * stripeHeaderFor('t=1767225600,v1=ab12…,kv=1') // 't=1767225600,v1=ab12…'
 * ```
 */
export function stripeHeaderFor(kybSignature: string): string {
  const fields = new Map(
    kybSignature.split(',').map((field) => [field.slice(0, field.indexOf('=')), field.slice(field.indexOf('=') + 1)]),
  );
  const t = fields.get('t');
  const v1 = fields.get('v1');
  if (t === undefined || v1 === undefined) throw new Error('a Service-KYB-Signature header needs t and v1');
  return `t=${t},v1=${v1}`;
}
