/**
 * Steps 1 to 5 of the pipeline (docs/architecture.md §3) and the event data schema: every check an event passes before it may
 * touch the dedupe store. A delivery gets them all (`check`); an event fetched from the authenticated KYB API gets
 * them minus the limits and the HMAC it cannot have (`verifyFetched`).
 */
import type { AttestationClaims, DetailedAttestationVerifier } from '../verify/attestation.js';
import { DeliveryContext } from './dispatch.js';
import type { Envelope } from '../events/envelope.js';
import { KybWebhookError, rejection } from '../errors.js';
import type { KnownEventType, KybEvent, UnknownKybEvent } from '../events/events.js';
import { ATTESTED_EVENT_TYPES } from '../events/event-types.js';
import { readHeader } from '../http/headers.js';
import { dedupeKeyOf } from './dedupe-key.js';
import { checkLimits } from './limits.js';
import type { Thenable } from './deadline.js';
import type { OrderedItem } from '../ordering/types.js';
import type { ReceiveInput } from '../receiver-types.js';
import { rememberingTest } from '../events/patterns.js';
import { createLazyValidator, releasedAnswersOf } from '../events/lazy-validation.js';
import type { LocatedAnswerList, ReleasedAnswers } from '../events/released-answers.js';
import type { PlanNode, ValidationResult } from '../events/schema-plan.js';
import { DATA_VERDICTS, envelopeVerdict } from '../events/schema-plans.generated.js';
import type { createSignatureCheck, VerifiedSignature } from '../verify/signature.js';
import type { ApiVersionCheck } from './api-version.js';

/** A verified event, ready for dedupe: what the handlers get, and how it is deduped. */
export interface VerifiedItem extends OrderedItem {
  event: KybEvent | UnknownKybEvent;
  context: DeliveryContext;
  typed: boolean;
}

/** What the checks of a delivery (steps 1 to 5 and the data schema) end in. */
export type Checked = VerifiedItem | { refused: KybWebhookError; envelope?: Envelope } | { unauthenticated: Envelope };

/** The receiver's configured checks; either may be absent, never both (receiver-options.ts). */
export interface CheckOptions {
  maxBodyBytes: number;
  checkSignature: ReturnType<typeof createSignatureCheck> | undefined;
  verifyAttestation: DetailedAttestationVerifier | undefined;
  /** The receiver's `apiVersion` rule (api-version.ts); absent, every version goes on unlogged. */
  checkApiVersion?: ApiVersionCheck;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
type Validator<T> = (value: unknown) => ValidationResult<T> | Promise<ValidationResult<T>>;
// By the schemas' plans, without zod; zod is loaded only for a value a plan does not accept (lazy-validation.ts).
const validateEnvelope: Validator<Envelope> = createLazyValidator(envelopeVerdict, (schemas) => schemas.envelopeSchema);
const dataValidators = new Map<string, Validator<unknown>>(
  (Object.entries(DATA_VERDICTS) as [KnownEventType, PlanNode][]).map(([type, verdict]) => [
    type,
    createLazyValidator<unknown>(verdict, (schemas) => schemas.eventDataSchemas[type]),
  ]),
);

/** The checks of one receiver: of a delivery (`check`), and of an event fetched from the KYB API (`verifyFetched`). */
export interface ReceiverChecks {
  check(input: ReceiveInput): Checked | Promise<Checked>;
  verifyFetched(raw: unknown): Promise<VerifiedItem | KybWebhookError>;
}

/**
 * Creates the checks of one receiver. Every step runs once per delivery, so the common path avoids what it can: no
 * promise for checks that answer at once (an HMAC-only delivery on Node is checked synchronously from end to end; only
 * a Web Crypto HMAC or an attestation makes it wait), no copy of a payload the schema guard accepted as it is, no log
 * entry built for a receiver without a logger.
 */
export function createChecks(options: CheckOptions): ReceiverChecks {
  const { maxBodyBytes, checkSignature, verifyAttestation } = options;
  const checkVerifiedBytes = createPayloadChecks(verifyAttestation, options.checkApiVersion);
  function check(input: ReceiveInput): Checked | Promise<Checked> {
    // 1. limits (limits.ts)
    const limited = checkLimits(input, maxBodyBytes);
    // A refusal carries its code and bytes have none: read, not instanceof (Thenable in deadline.ts says why).
    if (typeof (limited as KybWebhookError).code === 'string') return { refused: limited as KybWebhookError };
    const body = limited as Uint8Array;

    // 2. signature over the exact bytes
    if (!checkSignature) return checkVerifiedBytes(input, body, null);
    let verified: VerifiedSignature | Promise<VerifiedSignature>;
    try {
      verified = checkSignature(readHeader(input.headers, 'service-kyb-signature'), body);
    } catch (error) {
      return { refused: asKybError(error) };
    }
    if (typeof (verified as Thenable).then !== 'function')
      return checkVerifiedBytes(input, body, { version: (verified as VerifiedSignature).version });
    return (verified as Promise<VerifiedSignature>).then(
      (signature) => checkVerifiedBytes(input, body, { version: signature.version }),
      (error: unknown) => ({ refused: asKybError(error) }),
    );
  }

  return { check, verifyFetched: (raw) => verifyFetchedEvent(verifyAttestation, raw) };
}

/** Steps 3 to 5 and the data schema of one receiver: for a body whose signature (if configured) held. */
function createPayloadChecks(
  verifyAttestation: DetailedAttestationVerifier | undefined,
  checkApiVersion: ApiVersionCheck | undefined,
): (input: ReceiveInput, body: Uint8Array, hmac: { version: string } | null) => Checked | Promise<Checked> {
  function checkVerifiedBytes(
    input: ReceiveInput,
    body: Uint8Array,
    hmac: { version: string } | null,
  ): Checked | Promise<Checked> {
    // 3. parse the verified bytes, never a re-serialization
    let json: unknown;
    try {
      json = JSON.parse(utf8.decode(body));
    } catch {
      return { refused: rejection('body_not_json') };
    }

    // 4. envelope. The steps below take a promise only where zod must judge (lazy-validation.ts) or an attestation is
    // verified: a synchronous answer goes straight on, with no callback made for it.
    const parsed = validateEnvelope(json);
    if (typeof (parsed as Thenable).then === 'function')
      return (parsed as Promise<ValidationResult<Envelope>>).then((settled) => checkEnvelope(input, settled, hmac));
    return checkEnvelope(input, parsed as ValidationResult<Envelope>, hmac);
  }

  /** Step 5 and the data schema, once the envelope's schema answered. */
  function checkEnvelope(
    input: ReceiveInput,
    parsed: ValidationResult<Envelope>,
    hmac: { version: string } | null,
  ): Checked | Promise<Checked> {
    if (!parsed.success) return { refused: rejection('envelope_invalid', describeIssues(parsed.issues)) };
    const envelope = parsed.data;

    // 5. attestation: every event that carries one is verified, known type or not, and bound to this envelope
    if (envelope.attestation !== undefined) {
      if (!verifyAttestation) return { refused: rejection('attestation_not_configured'), envelope };
      // The verifier is an async function (attestation.ts): every failure, even one found before any await, is a
      // rejection, never a synchronous throw.
      return verifyAttestation(envelope.attestation, envelope).then(
        ({ claims, answers }) => checkData(input, envelope, hmac, claims, answers),
        (error: unknown) => ({ refused: asKybError(error), envelope }),
      );
    }
    if (ATTESTED_EVENT_TYPES.has(envelope.event)) return { refused: rejection('attestation_missing'), envelope };
    // No secrets and no attestation: nothing authenticates this delivery (spec 5.4).
    if (!hmac) return { unauthenticated: envelope };
    return checkData(input, envelope, hmac, undefined, undefined);
  }

  /** The event data schema, then the verified item; authenticated by now, by the HMAC, the attestation or both. */
  function checkData(
    input: ReceiveInput,
    envelope: Envelope,
    hmac: { version: string } | null,
    claims: AttestationClaims | undefined,
    answers: LocatedAnswerList | undefined,
  ): Checked | Promise<Checked> {
    const validateData = dataValidators.get(envelope.event);
    if (!validateData) return verifiedItem(input, envelope, hmac, claims, answers, undefined);
    const data = validateData(envelope.data);
    if (typeof (data as Thenable).then === 'function')
      return (data as Promise<ValidationResult<unknown>>).then((settled) =>
        verifiedItem(input, envelope, hmac, claims, answers, settled),
      );
    return verifiedItem(input, envelope, hmac, claims, answers, data as ValidationResult<unknown>);
  }

  /**
   * The item for dedupe, once the data schema answered (`data`; undefined for a type without a schema): the API
   * version checked and the handler context made.
   */
  function verifiedItem(
    input: ReceiveInput,
    envelope: Envelope,
    hmac: { version: string } | null,
    claims: AttestationClaims | undefined,
    answers: LocatedAnswerList | undefined,
    data: ValidationResult<unknown> | undefined,
  ): Checked | Promise<Checked> {
    if (data && !data.success) return { refused: dataRefusal(data), envelope };
    // The version, once the body is authenticated: its api_version is signed, the header is not (api-version.ts).
    const refused = checkApiVersion?.(envelope, readHeader(input.headers, 'service-kyb-api-version'));
    if (refused) return { refused, envelope };
    const context = new DeliveryContext(
      { hmac, attestation: claims !== undefined },
      claims,
      parseAttempt(readHeader(input.headers, 'service-delivery-attempt')),
      envelope.api_version,
    );
    // 6. dedupe comes next, and only now: an unverified delivery must never poison the store (claim-run-settle.ts).
    const item = {
      envelope,
      event: data ? typedEvent(envelope, data.data) : envelope,
      context,
      dedupeKey: dedupeKeyOf(envelope, claims),
      typed: data !== undefined,
      waitUntil: input.waitUntil,
    };
    const withReleased = withAnswers(context, envelope, claims, answers);
    return withReleased ? withReleased.then(() => item) : item;
  }

  return checkVerifiedBytes;
}

/**
 * Verifies an event fetched from the KYB API to fill a gap, with the checks a delivery gets after its HMAC: the
 * envelope schema, the attestation (an attested type must carry one, verified and bound to the envelope), the
 * event data schema. It has no HMAC to check: the API answered it over a call authenticated by the API key.
 */
async function verifyFetchedEvent(
  verifyAttestation: CheckOptions['verifyAttestation'],
  raw: unknown,
): Promise<VerifiedItem | KybWebhookError> {
  const parsed = await validateEnvelope(raw);
  if (!parsed.success) return rejection('envelope_invalid', describeIssues(parsed.issues));
  const envelope = parsed.data;
  let claims: AttestationClaims | undefined;
  let answers: LocatedAnswerList | undefined;
  if (envelope.attestation !== undefined) {
    if (!verifyAttestation) return rejection('attestation_not_configured');
    try {
      ({ claims, answers } = await verifyAttestation(envelope.attestation, envelope, { fetched: true }));
    } catch (error) {
      return asKybError(error);
    }
  } else if (ATTESTED_EVENT_TYPES.has(envelope.event)) {
    return rejection('attestation_missing');
  }
  const event = await validatedEvent(envelope);
  if (event instanceof KybWebhookError) return event;
  const context = new DeliveryContext(
    { hmac: null, attestation: claims !== undefined, fetched: true },
    claims,
    undefined,
    envelope.api_version,
  );
  await withAnswers(context, envelope, claims, answers);
  return {
    envelope,
    event,
    context,
    dedupeKey: dedupeKeyOf(envelope, claims),
    typed: dataValidators.has(envelope.event),
  };
}

/**
 * The event with its data checked against its type's schema (the envelope itself when the plan accepted the data as
 * it is, or the type is unknown), or the refusal.
 */
async function validatedEvent(envelope: Envelope): Promise<KybEvent | UnknownKybEvent | KybWebhookError> {
  const validateData = dataValidators.get(envelope.event);
  if (!validateData) return envelope;
  const data = await validateData(envelope.data);
  return data.success ? typedEvent(envelope, data.data) : dataRefusal(data);
}

/** The event once its data schema accepted `data`. */
function typedEvent(envelope: Envelope, data: unknown): KybEvent | UnknownKybEvent {
  // The plan hands back the very object it accepted; only zod's own output (an odd object) is a copy.
  return data === envelope.data ? envelope : ({ ...envelope, data } as KybEvent);
}

/** The refusal of data its schema did not accept. */
function dataRefusal(data: { issues: readonly { path: PropertyKey[]; code: string }[] }): KybWebhookError {
  return rejection('event_data_invalid', describeIssues(data.issues));
}

/**
 * A release's answers into the handler context, from where the verified claims carry them (`answers`, located by
 * the binding or by `locateReleasedAnswerList`).
 */
export function withAnswers(
  context: DeliveryContext,
  envelope: Envelope,
  claims: AttestationClaims | undefined,
  answers: LocatedAnswerList | undefined,
): void | Promise<void> {
  if (!claims || envelope.event !== 'kyb.data_request.released') return;
  // Synchronous answers (the common case) are set at once, with no callback made; as in checkData.
  const released = releasedAnswersOf(answers);
  if (typeof (released as Thenable).then === 'function') {
    return (released as Promise<ReleasedAnswers>).then((settled) => {
      context.answers = settled;
    });
  }
  context.answers = released as ReleasedAnswers;
}

const isAttempt = rememberingTest(/^\d{1,9}$/);

/**
 * `Service-Delivery-Attempt`, when present and an attempt number (spec 2.4: an integer starting at 1; leading zeros
 * are read leniently); anything else, `0` included, is ignored.
 */
export function parseAttempt(value: string | undefined): number | undefined {
  if (value === undefined || !isAttempt(value)) return undefined;
  const attempt = Number(value);
  return attempt >= 1 ? attempt : undefined;
}

/** A thrown error as the refusal it answers: our own codes as they are, anything else `internal_error`. */
function asKybError(error: unknown): KybWebhookError {
  return error instanceof KybWebhookError ? error : rejection('internal_error', undefined, error);
}

/** Names what failed without echoing any value from the body. */
function describeIssues(issues: readonly { path: PropertyKey[]; code: string }[]): string {
  return issues
    .slice(0, 5)
    .map((issue) => `${issue.path.map(String).join('.') || '(root)'}: ${issue.code}`)
    .join('; ');
}
