import { createFetchHandler, createReceiver, type Receiver } from '@kyb-webhooks/core';

/** The environment the receiver reads (`process.env` in the app; a plain object in tests). */
export type Env = Record<string, string | undefined>;

/**
 * Why the receiver cannot be made from the environment: the app answers deliveries 500 with this code (and the
 * message, which names variables, never their values) instead of failing its build or its start.
 */
export class ReceiverConfigError extends Error {
  readonly code = 'receiver_not_configured';
  override readonly name = 'ReceiverConfigError';
}

/**
 * The receiver from the environment: `KYB_SECRET_V1` (and `KYB_SECRET_V2` … during a rotation), and for attested
 * events `KYB_ATTESTATION_ISSUER`, `KYB_AUDIENCE` and `KYB_JWKS_URL` together. Throws a {@link ReceiverConfigError}
 * that says what to set when something is missing.
 */
export function receiverFromEnv(env: Env, record: (line: string) => void = console.log): Receiver {
  const secrets = Object.fromEntries(
    Object.entries(env)
      .filter((entry): entry is [string, string] => /^KYB_SECRET_V\d+$/.test(entry[0]) && Boolean(entry[1]))
      .map(([name, value]) => [name.slice('KYB_SECRET_V'.length), value]),
  );
  if (Object.keys(secrets).length === 0) {
    throw new ReceiverConfigError(
      'Set KYB_SECRET_V1 to your endpoint secret in the server’s environment (`kyb-webhooks keys` prints development values).',
    );
  }
  const attestationVars = ['KYB_ATTESTATION_ISSUER', 'KYB_AUDIENCE', 'KYB_JWKS_URL'] as const;
  const missing = attestationVars.filter((name) => !env[name]);
  if (missing.length > 0 && missing.length < attestationVars.length) {
    throw new ReceiverConfigError(
      `Attested events need KYB_ATTESTATION_ISSUER, KYB_AUDIENCE and KYB_JWKS_URL together: set ${missing.join(' and ')} too.`,
    );
  }
  const { KYB_ATTESTATION_ISSUER: issuer, KYB_AUDIENCE: audience, KYB_JWKS_URL: jwksUrl } = env;
  return createReceiver({
    secrets,
    attestation: issuer && audience && jwksUrl ? { issuer, audience, jwksUrl } : undefined,
  })
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
}

let handler: ((request: Request) => Promise<Response>) | undefined;

/**
 * The webhook route's handler, made on the first request rather than when the module loads: `next build` imports
 * route modules to collect their configuration, and there (in CI, in a Docker build) the secrets are not set. Until
 * the environment is complete every delivery is answered 500 `receiver_not_configured` (the service retries), and
 * the next request tries again, so setting the variables and restarting is all it takes.
 */
export async function handleWebhook(request: Request, env: Env = process.env): Promise<Response> {
  if (handler === undefined) {
    try {
      handler = createFetchHandler(receiverFromEnv(env), {
        onResult: (result) => console.log(`kyb webhook ${result.status} ${result.code ?? 'ok'}`),
      });
    } catch (error) {
      if (!(error instanceof ReceiverConfigError)) throw error;
      console.error(`kyb-webhooks: ${error.message}`);
      return Response.json({ error: { code: error.code, message: error.message } }, { status: 500 });
    }
  }
  return handler(request);
}
