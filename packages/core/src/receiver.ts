import { createDetailedAttestationVerifier } from './verify/attestation.js';
import { createChecks } from './pipeline/checks.js';
import { createApiVersionCheck } from './pipeline/api-version.js';
import { createClaimRunSettle } from './pipeline/claim-run-settle.js';
import { DEFAULT_HANDLER_TIMEOUT_MS, DEFAULT_STORE_TIMEOUT_MS, validateReceiverOptions } from './receiver-options.js';
import { createConsoleLogger } from './log/console-logger.js';
import { DEFAULT_LEASE_MS, DEFAULT_RETAIN_MS, type DedupeStore } from './store/dedupe.js';
import { HandlerRegistry, type AnyEventHandler } from './pipeline/dispatch.js';
import { KybWebhookError, rejection } from './errors.js';
import { ATTESTED_EVENT_TYPES, isKnownEventType } from './events/event-types.js';
import { handlerTypes } from './events/handler-types.js';
import { DEFAULT_MAX_BODY_BYTES } from './pipeline/limits.js';
import { safeLog, type Logger } from './log/logger.js';
import { createMemoryStore } from './store/memory-store.js';
import type { createOrderedPath } from './ordering/stream-ordering.js';
import type { GapHandler } from './ordering/types.js';
import type { ReceiveInput, ReceiveResult, Receiver, ReceiverOptions, VerifiedDelivery } from './receiver-types.js';
import { replayFetched } from './pipeline/replay.js';
import { reject } from './pipeline/outcomes.js';
import { createHandlerRunner } from './pipeline/run-handlers.js';
import { createSignatureCheck } from './verify/signature.js';
import type { Thenable } from './pipeline/deadline.js';
import { isStreamCursorStore } from './store/stream-store.js';
import { createUnauthenticatedReceive } from './pipeline/unauthenticated.js';
import { createHandoff } from './queue/handoff.js';
import { linkWorkerPorts } from './queue/receiver-link.js';
import type { Checked, VerifiedItem } from './pipeline/checks.js';
import { withReceiveTrace } from './telemetry/receive-trace.js';

/** The checks of one receiver (checks.ts). */
type Checks = ReturnType<typeof createChecks>;

// The public types live in receiver-types.ts; re-exported so `./receiver.js` stays the one place to import from.
export type {
  ReceiveInput,
  ReceiveResult,
  Receiver,
  ReceiverOptions,
  ResponseBody,
  VerifiedDelivery,
} from './receiver-types.js';

/** Steps 1 to 5 and the event data schema (checks.ts): limits, signature, parse, envelope, attestation, data. */
function createReceiverChecks(
  options: ReceiverOptions,
  now: () => number,
  maxBodyBytes: number,
  logger: Logger | undefined,
): ReturnType<typeof createChecks> & Pick<Receiver, 'checkAttestationKeys'> {
  const toleranceSeconds = options.toleranceSeconds ?? 300;
  const checkSignature =
    options.secrets !== undefined
      ? createSignatureCheck({ secrets: options.secrets, toleranceSeconds, now, crypto: options.crypto })
      : undefined;
  const verifyAttestation = options.attestation
    ? createDetailedAttestationVerifier(options.attestation, now, options.crypto, options.telemetry)
    : undefined;
  const checks = createChecks({
    maxBodyBytes,
    checkSignature,
    verifyAttestation,
    checkApiVersion: createApiVersionCheck(options.apiVersion, logger),
  });
  async function checkAttestationKeys() {
    if (!verifyAttestation) {
      throw new KybWebhookError(
        'config_invalid',
        'checkAttestationKeys: this receiver has no `attestation` option, so it uses no keys. Configure attestation: { issuer, audience, jwksUrl }.',
      );
    }
    return { keys: await verifyAttestation.checkKeys() };
  }
  return { ...checks, checkAttestationKeys };
}

/**
 * Creates a receiver that runs every delivery through the pipeline of docs/architecture.md §3: limits, signature header,
 * JSON parse of the verified bytes, envelope, attestation, dedupe, dispatch, settle. A 2xx is answered only once
 * the handlers succeeded (or had before, for a duplicate); everything a retry could cure gets a non-2xx.
 *
 * @example
 * ```ts
 * const receiver = createReceiver({
 *   secrets: { '3': process.env.KYB_SECRET_V3! },
 *   attestation: { issuer: 'https://kyb.example.com', audience: process.env.KYB_AUDIENCE!,
 *     jwksUrl: 'https://api.kyb.example.com/.well-known/kyb-jwks.json' },
 * })
 * receiver.on('kyb.data_request.released', async (event, { answers }) => {
 *   await saveRelease(event.data.request_id, [...answers])
 * })
 * const result = await receiver.receive({ method: 'POST', headers, body })
 * ```
 */
export function createReceiver(options: ReceiverOptions): Receiver {
  // Every mistake throws config_invalid here, at creation, naming the option and the fix (receiver-options.ts).
  validateReceiverOptions(options);
  const { queue, telemetry, ordering, now = Date.now } = options;
  const hasSecrets = options.secrets !== undefined;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  const retainMs = options.retainMs ?? DEFAULT_RETAIN_MS;
  const handlerTimeoutMs = options.handlerTimeoutMs ?? DEFAULT_HANDLER_TIMEOUT_MS;
  const storeTimeoutMs = options.storeTimeoutMs ?? DEFAULT_STORE_TIMEOUT_MS;
  const store = options.store ?? createMemoryStore({ now });
  const logger = options.logger === false ? undefined : (options.logger ?? createConsoleLogger());
  const handlers = new HandlerRegistry(telemetry);
  const gapHandlers: GapHandler[] = [];

  const { check, verifyFetched, checkAttestationKeys } = createReceiverChecks(options, now, maxBodyBytes, logger);
  // Step 7 (run-handlers.ts): handlers within handlerTimeoutMs, failures told to onError.
  const runHandlers = createHandlerRunner(handlers, handlerTimeoutMs);
  // Steps 6 to 8 (claim-run-settle.ts): claim in the store, run the handlers, complete or release the claim.
  const claimRunSettle = createClaimRunSettle({
    store,
    leaseMs,
    retainMs,
    storeTimeoutMs,
    logger,
    handlers,
    runHandlers,
    telemetry,
  });
  const { processVerified } = claimRunSettle;
  // What nothing authenticates never reaches the store (unauthenticated.ts).
  const receiveUnauthenticated = createUnauthenticatedReceive(handlers, runHandlers, logger);

  const ordered = orderedPathOf(options, {
    hasSecrets,
    store,
    retainMs,
    now,
    handlerTimeoutMs,
    logger,
    gapHandlers,
    telemetry,
    steps: claimRunSettle,
    verifyFetched,
  });

  // Steps 6 to 8 as an inline delivery runs them (and as a queue worker runs a job): the ordered path, or claim-run-settle.
  const processInline = ordered ?? processVerified;
  // Queue mode (queue/handoff.ts): a verified delivery is enqueued (sealed with queueEncryption) and answered.
  const cipher = options.queueEncryption?.cipher;
  const accept: (item: VerifiedItem) => Promise<ReceiveResult> = queue
    ? createHandoff({ queue, logger, now, timeoutMs: storeTimeoutMs, cipher, telemetry })
    : processInline;

  async function receive(input: ReceiveInput): Promise<ReceiveResult> {
    try {
      // 1 to 5: every check before the event may touch the store
      const soon = check(input);
      const checked = typeof (soon as Thenable).then === 'function' ? await soon : (soon as Checked);
      if ('refused' in checked) return reject(logger, checked.refused, checked.envelope);
      if ('unauthenticated' in checked) return await receiveUnauthenticated(checked.unauthenticated, input);
      // 6 to 8: with ordering on, the ordered path dedupes, orders and runs it (ordering/receive.ts); in queue mode,
      // the queue takes it and a worker runs them
      return await accept(checked);
    } catch (error) {
      // A bug of ours or input that throws when read (not a logger: safeLog swallows its errors): a retryable 500.
      return reject(logger, rejection('internal_error', undefined, error));
    }
  }

  const warnIfNeverDelivered = neverDeliveredWarning(logger);

  const receiver: Receiver = {
    on(type, handler) {
      for (const each of handlerTypes(type, handler)) {
        handlers.add(each, handler as unknown as AnyEventHandler);
        if (!hasSecrets) warnIfNeverDelivered(each);
      }
      return receiver;
    },
    onAny(handler) {
      handlers.addAny(handler);
      return receiver;
    },
    onUnknown(handler) {
      handlers.addUnknown(handler);
      return receiver;
    },
    onUnauthenticated(handler) {
      handlers.unauthenticated.push(handler);
      return receiver;
    },
    onError(handler) {
      handlers.error.push(handler);
      return receiver;
    },
    onGap(handler) {
      gapHandlers.push(handler);
      return receiver;
    },
    receive: withReceiveTrace(receive, telemetry, hasSecrets),
    verify: (input) => verifyDelivery(check, input),
    checkAttestationKeys,
    replay: (raw, replayOptions) => replayThrough(raw, replayOptions, { verifyFetched, logger, accept }),
    orderingMode: ordered ? ordering!.mode : 'off',
    reject(code) {
      return reject(logger, code);
    },
    maxBodyBytes,
  };
  linkWorkerPorts(receiver, {
    process: processInline,
    answersClaim: options.attestation?.answersClaim,
    queue,
    cipher,
    logger,
    telemetry,
  });
  return receiver;
}

/** `receiver.replay`: an event fetched from the API, verified and taken as a delivery would be (replay.ts). */
async function replayThrough(
  raw: unknown,
  replayOptions: Parameters<Receiver['replay']>[1],
  parts: {
    verifyFetched: Checks['verifyFetched'];
    logger: Logger | undefined;
    accept: (item: VerifiedItem) => Promise<ReceiveResult>;
  },
): Promise<ReceiveResult> {
  try {
    return await replayFetched(raw, replayOptions, {
      verify: parts.verifyFetched,
      refuse: (error) => reject(parts.logger, error),
      process: parts.accept,
    });
  } catch (error) {
    if (replayOptions?.signal?.aborted && error === replayOptions.signal.reason) throw error;
    return reject(parts.logger, rejection('internal_error', undefined, error));
  }
}

/**
 * The ordered path of a receiver whose ordering is 'detect' or 'enforce', or undefined with ordering off (the default:
 * the hot path then pays one branch and nothing else). The engine comes with the option (`streamOrdering()`,
 * ordering/stream-ordering.ts), so a receiver without ordering never loads it; validateReceiverOptions refused
 * 'detect' and 'enforce' without it.
 */
function orderedPathOf(
  options: ReceiverOptions,
  parts: Omit<Parameters<typeof createOrderedPath>[1], 'mode' | 'store'> & { store: DedupeStore },
): ReturnType<typeof createOrderedPath> | undefined {
  const { ordering } = options;
  if (!ordering || ordering.mode === 'off' || !isStreamCursorStore(parts.store)) return undefined;
  return (ordering.engine as typeof createOrderedPath)(ordering, { ...parts, mode: ordering.mode, store: parts.store });
}

/** `receiver.verify`: the checks of a delivery and nothing else; throws what a delivery would be refused with. */
async function verifyDelivery(check: Checks['check'], input: ReceiveInput): Promise<VerifiedDelivery> {
  const checked = await check(input);
  if ('refused' in checked) throw checked.refused;
  if ('unauthenticated' in checked) {
    throw new KybWebhookError(
      'attestation_missing',
      'Nothing authenticates this delivery: the receiver has no secrets and the event carries no attestation (spec 5.4).',
    );
  }
  const { context } = checked;
  return {
    event: checked.event,
    authentication: context.authentication,
    claims: context.claims,
    answers: context.answers,
    deliveryAttempt: context.deliveryAttempt,
  };
}

/**
 * Without secrets, nothing authenticates the deliveries of a type that never carries an attestation: they go to
 * onUnauthenticated, and an on() handler for the type runs only for events fetched from the API. Said once per type,
 * when the handler is registered, rather than left to be found out from a handler that never runs.
 */
function neverDeliveredWarning(logger: Logger | undefined): (type: string) => void {
  const warnedTypes = new Set<string>();
  return function warnIfNeverDelivered(type: string): void {
    if (!logger || warnedTypes.has(type) || !isKnownEventType(type) || ATTESTED_EVENT_TYPES.has(type)) return;
    warnedTypes.add(type);
    safeLog(logger, {
      level: 'warn',
      message:
        `receiver.on('${type}'): this receiver has no secrets and ${type} carries no attestation, so its deliveries cannot be ` +
        'authenticated: they are answered 200 unauthenticated (see onUnauthenticated), and this handler runs only for events ' +
        'fetched from the KYB API (ordering backfill, replay). Pass the endpoint secret as `secrets` to authenticate them.',
      eventType: type,
    });
  };
}
