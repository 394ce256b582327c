import { createMemoryQueue, createQueueWorker, createReceiver, type Receiver } from '@kyb-webhooks/core';

/** The environment as every runtime can hand it over: Bun's `Bun.env`, Deno's `Deno.env.toObject()`, a Worker's `env`. */
export type Env = Record<string, string | undefined>;

/**
 * The receiver of the example, configured from the environment: `KYB_SECRET_V1` (and `KYB_SECRET_V2` … during a
 * rotation), and for attested events `KYB_ATTESTATION_ISSUER`, `KYB_AUDIENCE` and `KYB_JWKS_URL` together. Throws a
 * message that says what to set when something is missing. Web-standard only, so it runs on Bun, Deno and Workers.
 * With `KYB_QUEUE=memory` it is in queue mode ({@link exampleFromEnv}).
 */
export function receiverFromEnv(env: Env): Receiver {
  return exampleFromEnv(env).receiver;
}

/**
 * The example's receiver and, with `KYB_QUEUE=memory` (queue mode, docs/queue-mode.md), the worker that runs its
 * handlers from the memory queue in this process: deliveries are answered `200 queued` and the handlers run right
 * after. The memory queue is not durable: jobs still waiting die with the process (the Node examples take pg-boss or
 * BullMQ with `--queue=pgboss|bullmq`).
 */
export function exampleFromEnv(env: Env): { receiver: Receiver; startWorker(): Promise<void> } {
  if (env.KYB_QUEUE !== undefined && env.KYB_QUEUE !== 'memory') {
    throw new Error(
      `KYB_QUEUE=${env.KYB_QUEUE} is not a queue of this example: use KYB_QUEUE=memory, or leave it unset.`,
    );
  }
  const queue = env.KYB_QUEUE === 'memory' ? createMemoryQueue() : undefined;
  const receiver = receiverOf(env, queue);
  return {
    receiver,
    startWorker: queue ? () => createQueueWorker(receiver).start() : async () => {},
  };
}

function receiverOf(env: Env, queue: ReturnType<typeof createMemoryQueue> | undefined): Receiver {
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
    ...(queue ? { queue } : {}),
  });
}
