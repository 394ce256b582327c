import { describe, expect, it } from 'vitest';
import { ERRORS, KYB_WEBHOOK_ERROR_CODES, KybWebhookError, type KybWebhookErrorCode } from './errors.js';

// The @example of KybWebhookErrorCode, compiled by the typecheck: a code added to ERRORS without a case here breaks
// the build at the `never` line, so the documented union and the list cannot drift apart.
function advice(error: KybWebhookError): string {
  const code: KybWebhookErrorCode = error.code;
  switch (code) {
    case 'config_invalid':
      return error.message;
    case 'job_undecryptable':
      return 'a queue worker lacks the key a job was sealed with: ' + error.message;
    case 'signature_missing':
    case 'signature_malformed':
    case 'signature_mismatch':
    case 'signature_expired':
    case 'signature_future':
    case 'signature_unknown_version':
    case 'signature_version_expired':
      return 'not from the service, or a secret is missing';
    case 'attestation_missing':
    case 'attestation_invalid_typ':
    case 'attestation_invalid':
    case 'attestation_relabelled':
    case 'attestation_not_configured':
      return 'the attestation did not verify';
    case 'handler_failed':
    case 'handler_timeout':
    case 'late_unhandled':
      return 'your handler failed; the service retries';
    case 'jwks_unavailable':
    case 'store_unavailable':
    case 'backfill_unavailable':
    case 'internal_error':
    case 'queue_unavailable':
    case 'queue_full':
      return 'a dependency is down or full; the service retries';
    case 'in_progress':
    case 'out_of_order':
    case 'backfill_invalid':
    case 'event_data_invalid':
    case 'api_version_unsupported':
      return 'retried until it can be processed';
    case 'backfill_unfillable':
      return 'an earlier event is gone for good: skip it with ordering.onUnfillable';
    case 'body_too_large':
    case 'method_not_allowed':
    case 'unsupported_media_type':
    case 'body_not_json':
    case 'envelope_invalid':
    case 'body_already_parsed':
      return 'not a well-formed delivery';
    default: {
      const unhandled: never = code;
      return unhandled;
    }
  }
}

describe('one error model', () => {
  it('lists every rejection code of ERRORS, config_invalid and job_undecryptable, once each', () => {
    expect([...KYB_WEBHOOK_ERROR_CODES].sort()).toEqual(
      [...Object.keys(ERRORS), 'config_invalid', 'job_undecryptable'].sort(),
    );
  });

  it.each(KYB_WEBHOOK_ERROR_CODES.map((code) => [code]))('the documented switch handles %s', (code) => {
    expect(advice(new KybWebhookError(code, code === 'config_invalid' ? 'fix the option' : undefined))).toMatch(/\w/);
  });

  it('answers every rejection code with a non-2xx status, so the service retries or gives up, never believes it done', () => {
    for (const [code, { status }] of Object.entries(ERRORS))
      expect([code, status >= 400 && status <= 599]).toEqual([code, true]);
  });
});
