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
 * 402 `insufficient_credit`: the request cannot be afforded and was refused before anyone voted (spec 3, 7). Top up
 * the merchant's credit, then create the request again.
 *
 * @example
 * ```ts
 * if (error instanceof InsufficientCreditError) notifyBilling()
 * ```
 */
export class InsufficientCreditError extends KybApiError {
  declare readonly code: 'insufficient_credit';
  constructor(fields: Omit<ConstructorParameters<typeof KybApiError>[0], 'code' | 'status'>) {
    super({ ...fields, status: 402, code: 'insufficient_credit' });
    this.name = 'InsufficientCreditError';
  }
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
  return error instanceof KybApiError || (error instanceof Error && error.name === 'KybApiError' && 'code' in error);
}
