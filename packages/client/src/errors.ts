import { errorObjects } from './parse.js';

/**
 * Codes a {@link KybApiError} can carry: the spec's codes, the ones this client gives to failures without an HTTP
 * answer or without a code in the body, and any other code the service sends (kept as is, since new codes appear
 * without notice). A service code is kept only when it looks like one (`snake_case`, at most 64 characters); a
 * sentence in its place is not copied, and the status's own code stands instead.
 *
 * @example
 * ```ts
 * if (error instanceof KybApiError && error.code === 'unauthorized') rotateApiKey()
 * ```
 */
export type KybApiErrorCode =
  | 'insufficient_credit'
  | 'not_released'
  | 'payload_expired'
  | 'unauthorized'
  | 'forbidden'
  | 'request_not_found'
  | 'rate_limited'
  | 'service_unavailable'
  | 'invalid_response'
  | 'response_too_large'
  | 'invalid_request_id'
  | 'attestation_rejected'
  | 'timeout'
  | 'network_error'
  | 'aborted'
  | 'http_error'
  | 'too_many_pages'
  | (string & {});

/**
 * A failed KYB API call. `status` is the HTTP status, or null when no answer came (`timeout`, `network_error`,
 * `aborted`). The message never quotes the API key, a token or a response body; the service's own message is
 * not copied either, since it may echo request data.
 *
 * @example
 * ```ts
 * try {
 *   await client.redeliver(requestId)
 * } catch (error) {
 *   if (error instanceof KybApiError && error.status === 404) console.warn('unknown request', error.code)
 *   else throw error
 * }
 * ```
 */
export class KybApiError extends Error {
  /** The HTTP status, or null when the service gave no answer. */
  readonly status: number | null;
  readonly code: KybApiErrorCode;
  /** `METHOD path` of the call (no query, no host), for logs. */
  readonly operation: string;
  /** Attempts made, retries included. */
  readonly attempts: number;
  /** The wait the service asked for (Retry-After), when it asked for one. */
  readonly retryAfterMs?: number;

  constructor(fields: {
    status: number | null;
    code: KybApiErrorCode;
    message: string;
    operation: string;
    attempts: number;
    retryAfterMs?: number;
    cause?: unknown;
  }) {
    super(fields.message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.name = 'KybApiError';
    this.status = fields.status;
    this.code = fields.code;
    this.operation = fields.operation;
    this.attempts = fields.attempts;
    if (fields.retryAfterMs !== undefined) this.retryAfterMs = fields.retryAfterMs;
  }
}

/**
 * The amounts a 402 body gives, as far as it gives them (the spec shows no error body, 7): read from the body or its
 * `error` object, in cents.
 *
 * @example
 * ```ts
 * const { requiredCents, availableCents }: CreditAmounts = error
 * ```
 */
export interface CreditAmounts {
  /** What the request costs: `required_cents`, `quoted_cents`, `cost_cents` or `price_cents`. */
  requiredCents?: number;
  /** The merchant's credit: `available_cents`, `balance_cents` or `credit_cents`. */
  availableCents?: number;
  /** What is missing: `shortfall_cents` or `missing_cents`, else required − available when both are known. */
  shortfallCents?: number;
  /** `currency`, when it is a 3-letter code. */
  currency?: string;
}

/**
 * 402 `insufficient_credit`: the request cannot be afforded and was refused before anyone voted (spec 3, 7). Top up
 * the merchant's credit, then create the request again. Carries the amounts the service's answer gave.
 *
 * @example
 * ```ts
 * try {
 *   await client.request('POST', '/api/v1/kyb/data-requests', { body: { fields: ['company_name'] } })
 * } catch (error) {
 *   if (error instanceof InsufficientCreditError) notifyBilling(error.shortfallCents, error.currency)
 *   else throw error
 * }
 * ```
 */
export class InsufficientCreditError extends KybApiError implements CreditAmounts {
  declare readonly code: 'insufficient_credit';
  readonly requiredCents?: number;
  readonly availableCents?: number;
  readonly shortfallCents?: number;
  readonly currency?: string;

  constructor(
    fields: Omit<ConstructorParameters<typeof KybApiError>[0], 'code' | 'status'> & { amounts?: CreditAmounts },
  ) {
    const { amounts, ...rest } = fields;
    super({ ...rest, status: 402, code: 'insufficient_credit' });
    this.name = 'InsufficientCreditError';
    if (amounts) Object.assign(this, amounts);
  }
}

/** The {@link CreditAmounts} of a 402 body: only whole, non-negative numbers of cents and a 3-letter currency. */
export function readCreditAmounts(text: string): CreditAmounts {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return {};
  }
  // The amounts sit where the error code is read from: under `error`, at the top, or in the first of `errors`.
  const objects = errorObjects(body);
  const cents = (...names: string[]) => {
    for (const object of objects) {
      for (const name of names) {
        const value = object[name];
        if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
      }
    }
    return undefined;
  };
  const amounts: CreditAmounts = {};
  const required = cents('required_cents', 'quoted_cents', 'cost_cents', 'price_cents');
  const available = cents('available_cents', 'balance_cents', 'credit_cents');
  const shortfall =
    cents('shortfall_cents', 'missing_cents') ??
    (required !== undefined && available !== undefined ? Math.max(0, required - available) : undefined);
  if (required !== undefined) amounts.requiredCents = required;
  if (available !== undefined) amounts.availableCents = available;
  if (shortfall !== undefined) amounts.shortfallCents = shortfall;
  const currency = objects
    .map((object) => object.currency)
    .find((value) => typeof value === 'string' && /^[A-Za-z]{3}$/.test(value));
  if (typeof currency === 'string') amounts.currency = currency.toUpperCase();
  return amounts;
}

/**
 * Whether `error` is a {@link KybApiError} (also across copies of this package loaded twice).
 *
 * @example
 * ```ts
 * if (isKybApiError(error) && error.code === 'insufficient_credit') showTopUp()
 * ```
 */
export function isKybApiError(error: unknown): error is KybApiError {
  return (
    error instanceof KybApiError ||
    // Another copy of this package: its KybApiError, or its subclass for 402.
    (error instanceof Error &&
      (error.name === 'KybApiError' || error.name === 'InsufficientCreditError') &&
      'code' in error)
  );
}
