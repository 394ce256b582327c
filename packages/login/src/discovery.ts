/**
 * Start-up: discovery from `authUrl` by issuer (OIDC Discovery), and the checks that make a misconfiguration fail
 * there rather than at a user's first sign-in: the document names exactly the configured issuer, and lists every
 * endpoint the login uses, on https unless allowInsecureRequests.
 */
import * as oidc from 'openid-client';
import { KybLoginError, loginError } from './errors.js';
import type { LoginOptions } from './options.js';
import { safeWord } from './token-endpoint.js';

/** What discovery needs besides the options, with createLogin's defaults applied. */
export interface DiscoverySettings {
  idTokenAlgorithm: string;
  clockToleranceSeconds: number;
  timeoutSeconds: number;
}

/**
 * openid-client's client of the login server, its discovery document (checked), and the login JWKS's URL. Throws
 * `issuer_mismatch`, `discovery_failed` (also for an endpoint that is not https without allowInsecureRequests) or
 * `config_invalid` (an http authUrl without allowInsecureRequests).
 */
export async function discover(
  options: LoginOptions,
  settings: DiscoverySettings,
): Promise<{ config: oidc.Configuration; server: Readonly<oidc.ServerMetadata>; jwksUri: string }> {
  const confidential = options.clientSecret !== undefined;
  const metadata: Partial<oidc.ClientMetadata> = {
    client_id: options.clientId,
    response_types: ['code'],
    id_token_signed_response_alg: settings.idTokenAlgorithm,
    token_endpoint_auth_method: confidential ? 'client_secret_basic' : 'none',
    [oidc.clockTolerance]: settings.clockToleranceSeconds,
  };
  let config: oidc.Configuration;
  try {
    config = await oidc.discovery(
      new URL(options.authUrl),
      options.clientId,
      metadata,
      // openid-client's default would be client_secret_post; the service wants HTTP Basic (spec 5.1).
      confidential ? oidc.ClientSecretBasic(options.clientSecret) : oidc.None(),
      {
        execute: options.allowInsecureRequests ? [oidc.allowInsecureRequests] : [],
        timeout: settings.timeoutSeconds,
        ...(options.fetch ? { [oidc.customFetch]: fetchFor(options.fetch) } : {}),
      },
    );
  } catch (error) {
    throw discoveryError(error);
  }
  const server = config.serverMetadata();
  if (!namesConfiguredIssuer(server.issuer, options.authUrl)) throw issuerMismatch();
  if (!server.jwks_uri || !server.token_endpoint || !server.authorization_endpoint) {
    throw loginError(
      'discovery_failed',
      'the discovery document lacks jwks_uri, token_endpoint or authorization_endpoint',
    );
  }
  if (options.allowInsecureRequests !== true) checkHttpsEndpoints(server);
  return { config, server, jwksUri: server.jwks_uri };
}

const ENDPOINTS = ['jwks_uri', 'token_endpoint', 'authorization_endpoint'] as const;

/**
 * The endpoints the login uses must be https like authUrl: an http jwks_uri would let a network attacker substitute
 * the keys and forge tokens, an http token or authorization endpoint would expose codes, tokens and the user's login.
 * As for authUrl, only allowInsecureRequests (a local test provider) allows plain http, loopback included.
 */
function checkHttpsEndpoints(server: Readonly<oidc.ServerMetadata>): void {
  const plain = ENDPOINTS.filter(
    (name) => !URL.canParse(server[name]!) || new URL(server[name]!).protocol !== 'https:',
  );
  if (plain.length === 0) return;
  throw new KybLoginError(
    'discovery_failed',
    `The discovery document at authUrl names endpoints that are not https (${plain.join(', ')}), although authUrl is: ` +
      'the login server must announce https URLs (allowInsecureRequests: true only for a local test provider).',
    { detail: `not https in the discovery document: ${plain.join(', ')}` },
  );
}

/** openid-client passes its own Request init; keep its redirect: 'manual' and add nothing. */
function fetchFor(custom: typeof fetch): oidc.CustomFetch {
  return (url, init) => custom(url, init as RequestInit);
}

function issuerMismatch(): KybLoginError {
  return new KybLoginError(
    'issuer_mismatch',
    'The discovery document at authUrl names a different issuer. Set authUrl to exactly the issuer the login server ' +
      'announces (a trailing slash counts, except after a bare origin: https://login.example and https://login.example/ ' +
      'are one issuer); tokens are only accepted from that issuer.',
    { detail: 'discovery issuer differs from authUrl' },
  );
}

/** An issuer that is a bare origin, with or without the slash a URL parser adds: `https://login.example[/]`. */
const ROOT_ISSUER = /^https?:\/\/[^/?#\s]+\/?$/i;

/**
 * Whether the discovery document names the configured issuer (OIDC Discovery 4.3: identical), with one allowance: at
 * a bare origin a trailing slash is no difference, since `https://login.example` and `https://login.example/` are one
 * URL and both spellings are in use. openid-client compares the two as parsed URLs, which also equates other spellings
 * (a scheme in capitals, `127.1`); those stay refused here, because every `iss` is then compared with the document's
 * issuer as a string.
 */
function namesConfiguredIssuer(discovered: string, authUrl: string): boolean {
  if (discovered === authUrl) return true;
  return (
    ROOT_ISSUER.test(discovered) &&
    ROOT_ISSUER.test(authUrl) &&
    discovered.replace(/\/$/, '') === authUrl.replace(/\/$/, '')
  );
}

function discoveryError(error: unknown): KybLoginError {
  const code = (error as { code?: string })?.code;
  if (code === 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED') return issuerMismatch();
  if (code === 'OAUTH_HTTP_REQUEST_FORBIDDEN') {
    return new KybLoginError(
      'config_invalid',
      'authUrl must be https (allowInsecureRequests: true only for a local test provider).',
    );
  }
  return new KybLoginError(
    'discovery_failed',
    `The discovery document at authUrl could not be fetched or read (${safeWord(code ?? (error as Error)?.name)}); check authUrl and the network.`,
    {
      detail: safeWord(code),
    },
  );
}
