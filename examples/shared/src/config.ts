import { createReceiver, type DedupeStore, type EventQueue, type Receiver } from '@kyb-webhooks/core';
import { registerDemoHandlers, type Activity } from './handlers.js';
import { openQueue, queueFlag, startWorker } from './queue.js';

// Used only when no KYB_SECRET_V<n> is set, so `pnpm start` works out of the box on a developer's machine.
const DEVELOPMENT_SECRET = 'whsec_development_only_do_not_use_in_production';

/**
 * The receiver of `pnpm start`, configured from the environment: KYB_SECRET_V1 (and KYB_SECRET_V2 … during a
 * rotation), and for attested events KYB_ATTESTATION_ISSUER, KYB_AUDIENCE and KYB_JWKS_URL. With `queue` it is in
 * queue mode (a worker runs its handlers: {@link exampleReceiver}), with `store` it dedupes there.
 */
export function receiverFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  mode: { queue?: EventQueue; store?: DedupeStore } = {},
): { receiver: Receiver; activity: Activity } {
  let secrets: Record<string, string> = Object.fromEntries(
    Object.entries(env)
      .filter(([name, value]) => /^KYB_SECRET_V\d+$/.test(name) && value)
      .map(([name, value]) => [name.slice('KYB_SECRET_V'.length), value as string]),
  );
  if (Object.keys(secrets).length === 0) {
    console.warn(`No KYB_SECRET_V<n> set: using the development secret "${DEVELOPMENT_SECRET}" as version 1.`);
    secrets = { '1': DEVELOPMENT_SECRET };
  }
  const { KYB_ATTESTATION_ISSUER: issuer, KYB_AUDIENCE: audience, KYB_JWKS_URL: jwksUrl } = env;
  // All three or none: with only some, the app would start and answer every attested event 500
  // attestation_not_configured, which looks like a bug in the app rather than a missing variable.
  const attestationVariables = { KYB_ATTESTATION_ISSUER: issuer, KYB_AUDIENCE: audience, KYB_JWKS_URL: jwksUrl };
  const unset = Object.entries(attestationVariables)
    .filter(([, value]) => !value)
    .map(([name]) => name);
  if (unset.length > 0 && unset.length < 3) {
    throw new Error(
      `Set ${unset.join(' and ')} too, or none of the three attestation variables: with only some, attested events cannot be verified.`,
    );
  }
  const receiver = createReceiver({
    secrets,
    attestation: issuer && audience && jwksUrl ? { issuer, audience, jwksUrl } : undefined,
    ...(mode.queue ? { queue: mode.queue } : {}),
    ...(mode.store ? { store: mode.store } : {}),
    logger: (entry) => {
      if (entry.level !== 'debug')
        console.log(
          JSON.stringify({
            level: entry.level,
            msg: entry.message,
            code: entry.code,
            event_id: entry.eventId,
            detail: entry.detail,
          }),
        );
    },
  });
  const activity = registerDemoHandlers(receiver);
  receiver.onAny((event, { job }) => {
    // onAny runs beside the typed handler; by the next microtask the typed one has recorded what it did.
    const worker = job ? ` (worker: job ${job.id}, run ${job.attempt})` : '';
    queueMicrotask(() =>
      console.log(`${event.event} ${event.event_id}: ${activity.get(event.event_id) ?? 'no handler'}${worker}`),
    );
  });
  return { receiver, activity };
}

/** The receiver of an example app, and, in queue mode, how to stop its worker and close its queue. */
export interface ExampleReceiver {
  receiver: Receiver;
  activity: Activity;
  /** Stops the worker (its running jobs finish) and closes the queue; nothing to do inline. */
  close(): Promise<void>;
}

/**
 * The receiver of an example app's `server.ts`: {@link receiverFromEnv}, inline; or with `--queue` among `args`, in
 * queue mode with a worker in this process (`--queue` the memory queue, `--queue=pgboss` with DATABASE_URL,
 * `--queue=bullmq` with REDIS_URL). It says which on the console, and on each of `signals` closes the worker and
 * the queue before the process exits.
 *
 * @example
 * ```ts
 * const { receiver } = await exampleReceiver().catch(exitWith)
 * createApp(receiver).listen(port, '127.0.0.1')
 * ```
 */
export async function exampleReceiver(
  args: readonly string[] = process.argv.slice(2),
  env: NodeJS.ProcessEnv = process.env,
  signals: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM'],
): Promise<ExampleReceiver> {
  const engine = queueFlag(args);
  if (!engine) return { ...receiverFromEnv(env), close: async () => {} };
  const opened = await openQueue(engine, env);
  try {
    const example = receiverFromEnv(env, { queue: opened.queue, store: opened.store });
    const worker = await startWorker(example.receiver);
    console.log(
      `Queue mode, ${opened.description}: each verified delivery is answered 200 queued once the queue holds it; a worker in this process then runs the handlers.`,
    );
    console.log(opened.durability);
    let closing: Promise<void> | undefined;
    const close = () =>
      (closing ??= (async () => {
        await worker.stop();
        await opened.close();
      })());
    for (const signal of signals) process.once(signal, () => void close().then(() => process.exit(0)));
    return { ...example, close };
  } catch (error) {
    await opened.close();
    throw error;
  }
}

/** PORT or 3000. */
export const port = Number(process.env.PORT ?? 3000);
