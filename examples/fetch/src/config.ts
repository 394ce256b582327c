import { createReceiver, type Receiver } from '@kyb-webhooks/core';

/** The environment as every runtime can hand it over: Bun's `Bun.env`, Deno's `Deno.env.toObject()`, a Worker's `env`. */
export type Env = Record<string, string | undefined>;

/**
 * The receiver of the example, configured from the environment: `KYB_SECRET_V1` (and `KYB_SECRET_V2` … during a
 * rotation), and for attested events `KYB_ATTESTATION_ISSUER`, `KYB_AUDIENCE` and `KYB_JWKS_URL` together. Throws a
 * message that says what to set when something is missing. Web-standard only, so it runs on Bun, Deno and Workers.
 */
export function receiverFromEnv(env: Env): Receiver {
  const secrets = Object.fromEntries(
    Object.entries(env)
      .filter((entry): entry is [string, string] => /^KYB_SECRET_V\d+$/.test(entry[0]) && Boolean(entry[1]))
      .map(([name, value]) => [name.slice('KYB_SECRET_V'.length), value]),
  );
  if (Object.keys(secrets).length === 0) {
    throw new Error(
      'Set KYB_SECRET_V1 to your endpoint secret (e.g. KYB_SECRET_V1=whsec_… pnpm start:bun); `kyb-webhooks keys` prints development values.',
    );
  }
  const attestationVars = ['KYB_ATTESTATION_ISSUER', 'KYB_AUDIENCE', 'KYB_JWKS_URL'] as const;
  const missing = attestationVars.filter((name) => !env[name]);
  if (missing.length > 0 && missing.length < attestationVars.length) {
    throw new Error(
      `Attested events need KYB_ATTESTATION_ISSUER, KYB_AUDIENCE and KYB_JWKS_URL together: set ${missing.join(' and ')} too.`,
    );
  }
  const { KYB_ATTESTATION_ISSUER: issuer, KYB_AUDIENCE: audience, KYB_JWKS_URL: jwksUrl } = env;
  return createReceiver({
    secrets,
    attestation: issuer && audience && jwksUrl ? { issuer, audience, jwksUrl } : undefined,
  });
}
