import type { ReceiveResult } from '@kyb-webhooks/core';
import type { RecoverTarget } from '@kyb-webhooks/client';
import { createTestSender, createTestSigner, type TestEnvelope } from '@kyb-webhooks/testing';
import { usageError } from './errors.js';

/**
 * The prefix of the environment variables that hold the merchant's webhook signing secrets by version, as the
 * receivers (and `kyb-webhooks keys`) name them: `KYB_SECRET_V1`, `KYB_SECRET_V2` …
 *
 * @example
 * ```ts
 * process.env[`${SECRET_ENV_PREFIX}2`] // the secret of version 2
 * ```
 */
export const SECRET_ENV_PREFIX = 'KYB_SECRET_V';

/**
 * The webhook signing secrets found in the environment, by version (`KYB_SECRET_V<n>`), and the version that signs:
 * `version` when given, else the numerically highest, as the service signs with its current one.
 *
 * @example
 * ```ts
 * const { version, secret } = signingSecret({ KYB_SECRET_V1: 'whsec_…', KYB_SECRET_V2: 'whsec_…' }) // version '2'
 * ```
 */
export function signingSecret(
  env: NodeJS.ProcessEnv = process.env,
  version?: string,
): { version: string; secret: string } {
  const secrets = new Map<string, string>();
  for (const [name, value] of Object.entries(env)) {
    const match = /^KYB_SECRET_V(\d{1,9})$/.exec(name);
    if (match && value !== undefined && value.trim() !== '') secrets.set(match[1]!, value.trim());
  }
  if (secrets.size === 0) {
    throw usageError(
      `recover re-signs each event like the service does, with your endpoint's webhook signing secret: set ${SECRET_ENV_PREFIX}<n> (e.g. ${SECRET_ENV_PREFIX}1), the same variable your receiver reads.`,
    );
  }
  const chosen = version ?? [...secrets.keys()].sort((a, b) => Number(b) - Number(a))[0]!;
  const secret = secrets.get(chosen);
  if (secret === undefined) {
    const known = [...secrets.keys()].sort((a, b) => Number(a) - Number(b)).join(', ');
    throw usageError(
      `--secret-version ${chosen}: ${SECRET_ENV_PREFIX}${chosen} is not set (the environment has version ${known}); set it or give one of those.`,
    );
  }
  return { version: chosen, secret };
}

/**
 * The code of an event `recover` did not send because its attestation has expired: any receiver refuses it (spec
 * 5.5.4), and only a replay in the merchant's own process (`recover()` of `@kyb-webhooks/client`, through
 * `receiver.replay`) accepts a fetched event's expired attestation.
 *
 * @example
 * ```ts
 * if (failure.code === ATTESTATION_EXPIRED) console.log('recover it in the app, or ask the service to redeliver')
 * ```
 */
export const ATTESTATION_EXPIRED = 'attestation_expired';

/** The most clock-skew leeway a receiver allows on `exp` (`attestation.leewaySeconds` is at most 60). */
const MAX_LEEWAY_MS = 60_000;

/**
 * When an event's attestation expired, as an ISO date, if every receiver would refuse it now: `exp` more than the
 * largest leeway ago. Read without verifying (the receiver verifies); undefined for no attestation or no usable `exp`.
 *
 * @example
 * ```ts
 * expiredAttestation(envelope.attestation, Date.now()) // '2026-11-30T09:10:00.000Z'
 * ```
 */
export function expiredAttestation(token: unknown, nowMs: number): string | undefined {
  if (typeof token !== 'string') return undefined;
  let exp: unknown;
  try {
    exp = (JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { exp?: unknown }).exp;
  } catch {
    return undefined;
  }
  if (typeof exp !== 'number' || !Number.isFinite(exp) || exp * 1000 + MAX_LEEWAY_MS >= nowMs) return undefined;
  return new Date(exp * 1000).toISOString();
}

/**
 * What the merchant's receiver answered one replayed event with, beside the result `recover()` classifies: why no
 * answer came, when none did.
 *
 * @example
 * ```ts
 * const answer: RemoteAnswer = { status: null, error: 'network error (ECONNREFUSED)' }
 * ```
 */
export interface RemoteAnswer {
  status: number | null;
  code?: string;
  error?: string;
}

/**
 * A receiver that is the merchant's own webhook URL: {@link RecoverTarget.receiver} for `recover()`, each replayed
 * event POSTed to `url` as the service delivers it (headers of spec 2.4, HMAC with the merchant's secret over the
 * exact bytes, attestation kept as the service issued it, redirects not followed, one attempt).
 *
 * @example
 * ```ts
 * const receiver = await createRemoteReceiver({ url, secret, version: '1', timeoutMs: 10_000 })
 * const report = await recover({ client, receiver, requestIds: [requestId] })
 * ```
 */
export interface RemoteReceiver extends Pick<RecoverTarget['receiver'], 'replay' | 'orderingMode' | 'skipsUnfillable'> {
  /** The answer to the latest attempt of each event, by event_id. */
  readonly answers: ReadonlyMap<string, RemoteAnswer>;
  /** The highest seq of each stream the receiver acknowledged with a 2xx during this run. */
  readonly lastAcknowledged: ReadonlyMap<string, number>;
}

/**
 * Creates a {@link RemoteReceiver}. Its `orderingMode` is `enforce`, so `recover()` stops a stream at its first
 * event the receiver does not accept and holds the later ones: the receiver never gets seq N+1 before N. And it says
 * `skipsUnfillable: false`: this process cannot see what the endpoint's own ordering did with a refused event, so
 * recovery never tries the next one to find out (that probe proves a skip only for a receiver in its own process).
 *
 * @example
 * ```ts
 * const receiver = await createRemoteReceiver({ url: 'https://app.example.com/webhooks/kyb', secret, version: '2', timeoutMs: 10_000 })
 * ```
 */
export async function createRemoteReceiver(options: {
  url: string;
  secret: string;
  version: string;
  timeoutMs: number;
}): Promise<RemoteReceiver> {
  // The kit's signer only MACs here: every event is sent with the attestation the service issued (or none).
  const signer = await createTestSigner({
    secrets: { [options.version]: options.secret },
    currentVersion: options.version,
  });
  const sender = createTestSender({
    url: options.url,
    signer,
    timeoutMs: options.timeoutMs,
    retry: { maxAttempts: 1 },
  });
  const answers = new Map<string, RemoteAnswer>();
  const lastAcknowledged = new Map<string, number>();
  return {
    orderingMode: 'enforce',
    skipsUnfillable: false,
    answers,
    lastAcknowledged,
    async replay(event: unknown): Promise<ReceiveResult> {
      const envelope = event as TestEnvelope;
      const expiredAt = expiredAttestation(envelope.attestation, Date.now());
      if (expiredAt !== undefined) {
        answers.set(envelope.event_id, {
          status: null,
          code: ATTESTATION_EXPIRED,
          error: `not sent: its attestation expired at ${expiredAt}`,
        });
        return { status: 0, code: ATTESTATION_EXPIRED, headers: {}, body: {} } as unknown as ReceiveResult;
      }
      const attempt = await sender.deliverOnce(
        envelope,
        typeof envelope.attestation === 'string' ? { attestation: envelope.attestation } : { attest: false },
      );
      const answer: RemoteAnswer = { status: attempt.status };
      if (attempt.code !== undefined) answer.code = attempt.code;
      if (attempt.error !== undefined) answer.error = attempt.error;
      answers.set(envelope.event_id, answer);
      if (attempt.status !== null && attempt.status >= 200 && attempt.status < 300) {
        lastAcknowledged.set(
          envelope.stream_id,
          Math.max(envelope.seq, lastAcknowledged.get(envelope.stream_id) ?? -1),
        );
      }
      // No HTTP answer is a failure (status 0) with a code saying so; the detail stays in `answers`.
      const code =
        attempt.status === null ? (attempt.error?.startsWith('timeout') ? 'timeout' : 'no_answer') : attempt.code;
      return {
        status: attempt.status ?? 0,
        ...(code === undefined ? {} : { code }),
        headers: {},
        body: {},
      } as ReceiveResult;
    },
  };
}
