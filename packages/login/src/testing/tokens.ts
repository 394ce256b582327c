/**
 * Test helper: tokens the tests hand to the login in place of the provider's, to prove each is refused. Built with
 * jose like an attacker with a library would build them; nothing here is used outside tests.
 */
import { createPublicKey } from 'node:crypto';
import { decodeJwt, importJWK, SignJWT, UnsecuredJWT, type JWK, type JWTPayload } from 'jose';

export type Forgery = 'rs256' | 'none' | 'hs256-public-key' | 'other-key';

/** Signs `claims` the way `forgery` says; 'rs256' uses the provider's own key (a genuine signature). */
export async function craftToken(
  signingKey: JWK,
  claims: JWTPayload,
  forgery: Forgery = 'rs256',
  header: { typ?: string } = {},
): Promise<string> {
  if (forgery === 'none') return new UnsecuredJWT(claims).encode();
  if (forgery === 'hs256-public-key') {
    // The classic confusion: the verifier's RSA public key, as PEM, used as an HMAC secret.
    const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...publicJwk } = signingKey;
    const pem = createPublicKey({ key: publicJwk as import('node:crypto').JsonWebKey, format: 'jwk' }).export({
      type: 'spki',
      format: 'pem',
    });
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', kid: signingKey.kid, ...header })
      .sign(new TextEncoder().encode(String(pem)));
  }
  let key = signingKey;
  if (forgery === 'other-key') {
    const { generateKeyPair, exportJWK } = await import('jose');
    key = {
      ...(await exportJWK((await generateKeyPair('RS256', { extractable: true })).privateKey)),
      kid: signingKey.kid,
    };
  }
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'RS256', kid: key.kid, ...header })
    .sign(await importJWK(key, 'RS256'));
}

/**
 * A fetch for createLogin that passes everything through except the token endpoint's JSON, which `edit` may change:
 * the way to put a forged ID token into an otherwise genuine sign-in.
 */
export function tamperingFetch(
  edit: (body: Record<string, unknown>) => Promise<Record<string, unknown>> | Record<string, unknown>,
): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (!url.endsWith('/oauth2/token') || response.status !== 200) return response;
    const body = await edit((await response.json()) as Record<string, unknown>);
    return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
  };
}

/** The claims of the provider's genuine ID token, to copy into a forged one. */
export function claimsOf(token: unknown): JWTPayload {
  return decodeJwt(String(token));
}
