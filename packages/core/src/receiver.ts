import { answersFromClaims } from './answers.js';
import { createAttestationVerifier, type AttestationClaims, type AttestationOptions } from './attestation.js';
import type { PlatformCrypto } from './crypto/types.js';
import { DEFAULT_LEASE_MS, DEFAULT_RETAIN_MS, type ClaimResult, type DedupeStore } from './dedupe.js';
import {
  HandlerError,
  HandlerRegistry,
  type AnyEventHandler,
  type BaseHandlerContext,
  type EventHandler,
  type HandlerContext,
  type UnknownEventHandler,
} from './dispatch.js';
import { envelopeSchema, type Envelope } from './envelope.js';
import { createValidator, type ValidationResult } from './schema-guard.js';
import { ERRORS, KybWebhookError, rejection, type ErrorCode } from './errors.js';
import { ATTESTED_EVENT_TYPES, eventDataSchemas, type KnownEventType, type KybEvent, type UnknownKybEvent } from './events.js';
import { readHeader, type HeadersInput } from './headers.js';
import { safeLog, type Logger } from './logger.js';
import { createMemoryStore } from './memory-store.js';
import { createSignatureCheck, type SecretKeyring, type VerifiedSignature } from './signature.js';

/** Options of {@link createReceiver}. At least one of `secrets` and `attestation` is required. */
export interface ReceiverOptions {
  /**
   * HMAC secrets by version (`kv`), each a string or `{ secret, notAfter }`. When set, every delivery must carry a
   * valid `Service-KYB-Signature`. During the 24-hour overlap after a rotation, configure both versions and give
   * the old one `notAfter`.
   */
  secrets?: SecretKeyring;
  /** The attestation check (the trust boundary of spec 5.4): issuer, audience and the KYB JWKS. */
  attestation?: AttestationOptions;
  /** Where processed event ids are kept. Default: an in-memory store (one process only). */
  store?: DedupeStore;
  /** Allowed skew of the signature timestamp, both ways, in seconds. Default 300 (spec 8). */
  toleranceSeconds?: number;
  /** Largest body accepted, in bytes. Default 1 MiB. */
  maxBodyBytes?: number;
  /** How long one delivery may hold an event before another delivery may take over. Default 60 s. */
  leaseMs?: number;
  /** How long processed event ids are remembered. Default 30 days. */
  retainMs?: number;
  /** Clock in milliseconds. Default `Date.now`. */
  now?: () => number;
  /** Structured log hook; no secret, token or body content is ever passed to it. */
  logger?: Logger;
  /** @internal Crypto implementation override for tests of both paths. */
  crypto?: PlatformCrypto;
}

/** A delivery as an adapter hands it over. */
export interface ReceiveInput {
  /** HTTP method; when omitted the adapter vouches that it is POST. */
  method?: string;
  headers: HeadersInput;
  /** The raw body exactly as received. A string is taken as its UTF-8 bytes. */
  body: Uint8Array | ArrayBuffer | string;
}

/** The JSON body the adapter sends back. */
export type ResponseBody =
  | { received: true; code?: 'duplicate' }
  | { error: { code: ErrorCode; message: string } };

/** What the adapter writes back: status, extra headers and a JSON body. */
export interface ReceiveResult {
  status: number;
  /** `'duplicate'` or a rejection code; absent for a first, successful delivery. */
  code?: ErrorCode | 'duplicate';
  headers: Record<string, string>;
  body: ResponseBody;
  /** The verified event, once it got that far. */
  event?: KybEvent | UnknownKybEvent;
}

/**
 * A webhook receiver: register handlers, then hand every delivery to `receive`.
 */
export interface Receiver {
  /** Handle events of one type; the event and its context are typed by the name. */
  on<T extends KnownEventType>(type: T, handler: EventHandler<T>): Receiver;
  /** Handle every verified event. */
  onAny(handler: AnyEventHandler): Receiver;
  /** Handle verified events of types this library version does not know (new attested types appear unannounced). */
  onUnknown(handler: UnknownEventHandler): Receiver;
  /** Be told about handler failures (the delivery also gets a 500 and is retried). */
  onError(handler: (error: HandlerError) => unknown): Receiver;
  /** Verify, dedupe and dispatch one delivery. Never throws; every outcome is a result. */
  receive(input: ReceiveInput): Promise<ReceiveResult>;
  /**
   * The result for a delivery an adapter refuses before `receive` (body too large while streaming, body already
   * parsed by another middleware), logged like every other rejection.
   */
  reject(code: ErrorCode): ReceiveResult;
  /** The body limit, so adapters can stop reading early. */
  readonly maxBodyBytes: number;
}

const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
// Answers shared by every delivery, frozen so that no adapter or onResult hook can change another delivery's.
const NO_HEADERS: Record<string, string> = Object.freeze({});
const RECEIVED_BODY: ResponseBody = Object.freeze({ received: true });
const DUPLICATE_BODY: ResponseBody = Object.freeze({ received: true, code: 'duplicate' });
const RESPONSE_HEADERS: Partial<Record<ErrorCode, Record<string, string>>> = {
  method_not_allowed: Object.freeze({ allow: 'POST' }),
};
const utf8 = new TextDecoder('utf-8', { fatal: true });
const validateEnvelope = createValidator(envelopeSchema);
const dataValidators = new Map<string, (value: unknown) => ValidationResult<unknown>>(
  Object.entries(eventDataSchemas).map(([type, schema]) => [type, createValidator<unknown>(schema)]),
);
const encoder = new TextEncoder();

/**
 * Creates a receiver that runs every delivery through the pipeline of design §1: limits, signature header,
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
  const now = options.now ?? Date.now;
  const hasSecrets = options.secrets !== undefined && Object.keys(options.secrets).length > 0;
  if (!hasSecrets && !options.attestation) {
    throw new KybWebhookError(
      'config_invalid',
      'createReceiver needs `secrets` (HMAC keyring by kv version) or `attestation` (issuer, audience, jwksUrl), ' +
        'or both; a receiver with neither would accept forged deliveries.',
    );
  }
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const toleranceSeconds = options.toleranceSeconds ?? 300;
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  const retainMs = options.retainMs ?? DEFAULT_RETAIN_MS;
  for (const [name, value] of Object.entries({ maxBodyBytes, toleranceSeconds, leaseMs, retainMs })) {
    if (!(Number.isFinite(value) && value > 0)) throw new KybWebhookError('config_invalid', `${name} must be a positive number.`);
  }
  const checkSignature = hasSecrets
    ? createSignatureCheck({ secrets: options.secrets!, toleranceSeconds, now, crypto: options.crypto })
    : undefined;
  const verifyAttestation = options.attestation
    ? createAttestationVerifier(options.attestation, now, options.crypto)
    : undefined;
  const store = options.store ?? createMemoryStore({ now });
  // Frozen once: the store only reads them, and a delivery need not allocate them again.
  const claimOptions = Object.freeze({ leaseMs });
  const completeOptions = Object.freeze({ retainMs });
  const logger = options.logger;
  const handlers = new HandlerRegistry();

  function reject(error: KybWebhookError | ErrorCode, envelope?: Envelope): ReceiveResult {
    const failure = typeof error === 'string' ? rejection(error) : error;
    const code = failure.code as ErrorCode;
    const { status, message } = ERRORS[code];
    if (logger) {
      safeLog(logger, {
        level: status >= 500 ? 'error' : 'warn',
        message: `delivery rejected: ${code}`,
        code,
        status,
        eventId: envelope?.event_id,
        eventType: envelope?.event,
        detail: failure.detail,
        error: failure.cause,
      });
    }
    return {
      status,
      code,
      headers: RESPONSE_HEADERS[code] ?? NO_HEADERS,
      body: { error: { code, message } },
    };
  }

  // Every step below runs once per delivery, so the common path avoids what it can: no microtask for an answer
  // that is already there (a synchronous HMAC), no copy of a payload the schema guard accepted as it is, no log
  // entry built for a receiver without a logger.
  async function receive(input: ReceiveInput): Promise<ReceiveResult> {
    try {
      // 1. limits
      const method = input.method;
      if (method !== undefined && method !== 'POST' && method.toUpperCase() !== 'POST') return reject('method_not_allowed');
      const body = toBytes(input.body);
      if (!body) return reject('body_already_parsed');
      if (body.byteLength > maxBodyBytes) return reject('body_too_large');
      if (!isJsonContentType(readHeader(input.headers, 'content-type'))) return reject('unsupported_media_type');

      // 2. signature over the exact bytes
      let hmac: { version: string } | null = null;
      if (checkSignature) {
        let verified: VerifiedSignature | Promise<VerifiedSignature>;
        try {
          verified = checkSignature(readHeader(input.headers, 'service-kyb-signature'), body);
          if (verified instanceof Promise) verified = await verified;
        } catch (error) {
          return reject(asKybError(error));
        }
        hmac = { version: verified.version };
      }

      // 3. parse the verified bytes, never a re-serialization
      let json: unknown;
      try {
        json = JSON.parse(utf8.decode(body));
      } catch {
        return reject('body_not_json');
      }

      // 4. envelope
      const parsed = validateEnvelope(json);
      if (!parsed.success) return reject(rejection('envelope_invalid', describeIssues(parsed.issues)));
      const envelope = parsed.data;

      // 5. attestation: every event that carries one is verified, known type or not
      let claims: AttestationClaims | undefined;
      if (envelope.attestation !== undefined) {
        if (!verifyAttestation) return reject('attestation_not_configured', envelope);
        try {
          claims = await verifyAttestation(envelope.attestation, envelope);
        } catch (error) {
          return reject(asKybError(error), envelope);
        }
      } else if (ATTESTED_EVENT_TYPES.has(envelope.event)) {
        return reject('attestation_missing', envelope);
      }

      const validateData = dataValidators.get(envelope.event);
      let event: KybEvent | UnknownKybEvent = envelope;
      if (validateData) {
        const data = validateData(envelope.data);
        if (!data.success) return reject(rejection('event_data_invalid', describeIssues(data.issues)), envelope);
        // The guard hands back the very object it accepted; only zod's own output (never expected) is a copy.
        if (data.data !== envelope.data) event = { ...envelope, data: data.data } as KybEvent;
      }
      const context: BaseHandlerContext & { answers?: unknown } = {
        authentication: { hmac, attestation: claims !== undefined },
        claims,
        deliveryAttempt: parseAttempt(readHeader(input.headers, 'service-delivery-attempt')),
      };
      if (claims && envelope.event === 'kyb.data_request.released') context.answers = answersFromClaims(claims);

      // 6. dedupe, only now: an unverified delivery must never poison the store. Without secrets, an event without
      // an attestation is unauthenticated: it is deduped under its own key so that a forged one can never mark a
      // genuine event of the same id as done.
      const dedupeKey = hmac || claims ? envelope.event_id : `unverified:${envelope.event_id}`;
      let claim: ClaimResult;
      try {
        claim = await store.claim(dedupeKey, claimOptions);
      } catch (error) {
        return reject(rejection('store_unavailable', 'claim failed', error), envelope);
      }
      if (claim.status === 'completed') {
        if (logger) safeLog(logger, { level: 'info', message: 'duplicate delivery acknowledged', code: 'duplicate', status: 200, eventId: envelope.event_id, eventType: envelope.event });
        return { status: 200, code: 'duplicate', headers: NO_HEADERS, body: DUPLICATE_BODY, event };
      }
      if (claim.status === 'in_progress') return { ...reject('in_progress', envelope), event };

      // 7. dispatch
      try {
        const outcome = handlers.run(event as Envelope, context as HandlerContext, validateData !== undefined);
        if (isThenable(outcome)) await outcome;
      } catch (error) {
        // 8. settle a failure: free the claim so the service's retry runs the handlers again
        const handlerError = error instanceof HandlerError ? error : new HandlerError(envelope.event, envelope.event_id, [error]);
        for (const onError of handlers.error) {
          try {
            await onError(handlerError);
          } catch {
            // onError handlers are notifications; their own failures change nothing
          }
        }
        try {
          await store.release(dedupeKey, claim.token);
        } catch (releaseError) {
          safeLog(logger, { level: 'error', message: 'release failed; the event stays claimed until its lease expires', eventId: envelope.event_id, eventType: envelope.event, error: releaseError });
        }
        return { ...reject(rejection('handler_failed', undefined, handlerError), envelope), event };
      }

      // 8. settle a success. If recording completion fails the handlers still succeeded: acknowledging is right,
      // because a 5xx would make the service retry and run them again once the lease expired.
      try {
        const completed = await store.complete(dedupeKey, claim.token, completeOptions);
        if (!completed) {
          safeLog(logger, { level: 'warn', message: 'the lease expired before the handlers finished; raise leaseMs above your slowest handler', eventId: envelope.event_id, eventType: envelope.event });
        }
      } catch (error) {
        safeLog(logger, { level: 'error', message: 'complete failed after the handlers succeeded', code: 'store_unavailable', eventId: envelope.event_id, eventType: envelope.event, error });
      }
      if (logger) safeLog(logger, { level: 'debug', message: 'delivery processed', status: 200, eventId: envelope.event_id, eventType: envelope.event });
      return { status: 200, headers: NO_HEADERS, body: RECEIVED_BODY, event };
    } catch (error) {
      // A bug of ours or a throwing logger: still a clean, retryable answer, never a crash and never a 2xx.
      return reject(rejection('internal_error', undefined, error));
    }
  }

  const receiver: Receiver = {
    on(type, handler) {
      handlers.add(type, handler as unknown as AnyEventHandler);
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
    onError(handler) {
      handlers.error.push(handler);
      return receiver;
    },
    receive,
    reject(code) {
      return reject(code);
    },
    maxBodyBytes,
  };
  return receiver;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}

function asKybError(error: unknown): KybWebhookError {
  return error instanceof KybWebhookError ? error : rejection('internal_error', undefined, error);
}

function toBytes(body: unknown): Uint8Array | undefined {
  if (body instanceof Uint8Array) return body;
  if (typeof body === 'string') return encoder.encode(body);
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  return undefined;
}

function isJsonContentType(value: string | undefined): boolean {
  if (value === 'application/json') return true;
  if (!value) return false;
  const mediaType = value.split(';', 1)[0]!.trim().toLowerCase();
  return mediaType === 'application/json';
}

function parseAttempt(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d{1,9}$/.test(value)) return undefined;
  return Number(value);
}

/** Names what failed without echoing any value from the body. */
function describeIssues(issues: readonly { path: PropertyKey[]; code: string }[]): string {
  return issues
    .slice(0, 5)
    .map((issue) => `${issue.path.map(String).join('.') || '(root)'}: ${issue.code}`)
    .join('; ');
}
