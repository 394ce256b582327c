/*
 * API versions (spec 9, docs/receiver.md "API versions"). Every delivery carries its version twice: `api_version` in
 * the body, which the HMAC covers, and the `Service-Kyb-Api-Version` header, which nothing covers. The body is
 * authoritative; a header that disagrees is logged as suspect (a proxy or the sender rewrote one of them), once per
 * pair. With `apiVersion.expected` (the version the integration was written for), a delivery of another version is
 * accepted and logged once per version by default; `onOther: 'reject'` answers it `503 api_version_unsupported`, so the
 * service retries it while you deploy code for the new version. Never rejected by default: the service would retry
 * for hours and then quarantine the endpoint.
 */
import { rejection, type KybWebhookError } from '../errors.js';
import type { Envelope } from '../events/envelope.js';
import { safeLog, type Logger } from '../log/logger.js';
import { optionRules } from '../option-rules.js';
import { rule, type FieldsSpec } from '../option-validation.js';
import { describeValue } from '../option-words.js';

/**
 * An `api_version`: a date, `YYYY-MM-DD` (spec 2.3). Compare two as strings: dates in this form sort as they read.
 *
 * @example
 * ```ts
 * receiver.onAny((event, { apiVersion }) => { if (apiVersion >= '2026-06-01') useNewFields(event) })
 * ```
 */
export type ApiVersion = `${number}-${number}-${number}`;

/**
 * The receiver's `apiVersion` option.
 *
 * @example
 * ```ts
 * createReceiver({ secrets, apiVersion: { expected: '2026-01-01', onOther: 'accept' } })
 * ```
 */
export interface ApiVersionOptions {
  /** The `api_version` your handlers were written for, `YYYY-MM-DD`. */
  expected: string;
  /**
   * What a delivery of another version gets. `'accept'` (the default): processed as usual, and the first delivery of
   * each other version is logged (warn) with what to check. `'reject'`: answered `503 api_version_unsupported` before
   * anything is stored, so the service retries it (for about 9 hours) while you deploy; events fetched from the API
   * (backfill, `replay`) are never rejected for their version.
   */
  onOther?: 'accept' | 'reject';
}

/** Pairs and versions remembered for "once" logging: a sender varying the header cannot grow memory or flood the log. */
const MAX_REMEMBERED = 64;

/** The version check of one receiver: a refusal, or nothing when the delivery may go on. */
export type ApiVersionCheck = (envelope: Envelope, header: string | undefined) => KybWebhookError | undefined;

/**
 * Creates the version check of one receiver; it logs through `logger` and remembers what it logged.
 *
 * @example
 * ```ts
 * const checkVersion = createApiVersionCheck({ expected: '2026-01-01' }, logger)
 * const refused = checkVersion(envelope, readHeader(input.headers, 'service-kyb-api-version'))
 * ```
 */
export function createApiVersionCheck(
  options: ApiVersionOptions | undefined,
  logger: Logger | undefined,
): ApiVersionCheck {
  const loggedPairs = new Set<string>();
  const loggedVersions = new Set<string>();
  const once = (seen: Set<string>, key: string): boolean => {
    if (seen.has(key) || seen.size >= MAX_REMEMBERED) return false;
    seen.add(key);
    return true;
  };
  return function checkApiVersion(envelope, header) {
    const version = envelope.api_version;
    if (logger && header !== undefined && header !== version && once(loggedPairs, `${header}\u0000${version}`)) {
      warnHeaderDisagrees(logger, envelope, header);
    }
    if (options === undefined || version === options.expected) return undefined;
    if (options.onOther === 'reject') {
      return rejection('api_version_unsupported', `api_version ${version}; this receiver accepts ${options.expected}`);
    }
    if (logger && once(loggedVersions, version)) warnOtherVersion(logger, envelope, options.expected);
    return undefined;
  };
}

// The warnings are functions of their own: a delivery of the expected version runs neither, and a function the hot
// path calls is compiled whole the first time, its cold branches included.
function warnHeaderDisagrees(logger: Logger, envelope: Envelope, header: string): void {
  const version = envelope.api_version;
  safeLog(logger, {
    level: 'warn',
    message: `the Service-Kyb-Api-Version header (${header.slice(0, 40)}) disagrees with the signed api_version (${version}); the body is authoritative, so ${version} is used. A proxy may rewrite the header`,
    code: 'api_version_suspect',
    eventId: envelope.event_id,
    eventType: envelope.event,
  });
}

function warnOtherVersion(logger: Logger, envelope: Envelope, expected: string): void {
  const version = envelope.api_version;
  safeLog(logger, {
    level: 'warn',
    message: `deliveries of api_version ${version} arrive; this receiver was written for ${expected}. They are processed; check what changed in ${version} (new fields, new event types), then set apiVersion.expected to ${version}`,
    code: 'api_version_other',
    eventId: envelope.event_id,
    eventType: envelope.event,
  });
}

/** The fields of the receiver's `apiVersion` option, for its option rules (receiver-options.ts). */
export const apiVersionFields: FieldsSpec = {
  options: {
    expected: optionRules.required(
      rule((value) =>
        typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value)
          ? undefined
          : `must be an api_version, a date YYYY-MM-DD such as '2026-01-01', got ${describeValue(value)}.`,
      ),
      "set it to the api_version your handlers were written for, e.g. '2026-01-01'",
    ),
    onOther: rule((value) =>
      value === 'accept' || value === 'reject'
        ? undefined
        : `must be 'accept' (process it and log the version once; the default) or 'reject' (503, the service retries), got ${describeValue(value)}.`,
    ),
  },
  aliases: { version: 'expected', pinned: 'expected', writtenFor: 'expected', onMismatch: 'onOther', mode: 'onOther' },
};
