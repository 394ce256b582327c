import type { Command } from 'commander';
import { apiSettings, callApi, cellText, openClient, withApiOptions, type ApiOptions } from '../api.js';
import { CliError, EXIT, usageError } from '../errors.js';
import { formatTable, print, printJson } from '../output.js';

/**
 * Options of `release`: the API options and what the attestation is verified with (the receiver's values).
 *
 * @example
 * ```ts
 * const options: ReleaseCommandOptions = { issuer: 'https://kyb.example.com', audience: '3f2c…', json: true }
 * ```
 */
export interface ReleaseCommandOptions extends ApiOptions {
  issuer?: string;
  audience?: string;
  jwksUrl?: string;
}

/**
 * Registers `release <request-id>`: pulls a data request's release, verifies its attestation like a webhook, and
 * prints the released answers by subject and name.
 *
 * @example
 * ```ts
 * registerRelease(program) // kyb-webhooks release dr_01jd8x2k7q --json
 * ```
 */
export function registerRelease(program: Command): void {
  withApiOptions(
    program
      .command('release')
      .description(
        "pull a data request's release, verify its attestation (as your receiver does) and print the released answers by subject and name (personal data: stdout only)",
      )
      .argument('<request-id>', 'the data request id'),
  )
    .option('--issuer <iss>', 'the attestation issuer, {attestation_issuer} (default $KYB_ATTESTATION_ISSUER)')
    .option('--audience <uuid>', "the merchant's client domain UUID, the attestation aud (default $KYB_AUDIENCE)")
    .option(
      '--jwks-url <url>',
      'where the attestation keys are (default $KYB_JWKS_URL, else {base_url}/.well-known/kyb-jwks.json)',
    )
    .action(async (requestId: string, options: ReleaseCommandOptions) => {
      process.exitCode = await runRelease(requestId, options);
    });
}

/**
 * Runs `release`; returns the exit code: 0 released (answers printed) or not released yet (spec 4.2: not an error),
 * 1 when the values were purged (410 payload_expired) or the call or verification failed.
 *
 * @example
 * ```ts
 * const code = await runRelease('dr_01jd8x2k7q', { issuer, audience })
 * ```
 */
export async function runRelease(
  requestId: string,
  options: ReleaseCommandOptions,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const settings = apiSettings(options, env);
  const issuer = options.issuer ?? env.KYB_ATTESTATION_ISSUER;
  const audience = options.audience ?? env.KYB_AUDIENCE;
  const jwksUrl = options.jwksUrl ?? env.KYB_JWKS_URL;
  const missing: string[] = [];
  if (!issuer) missing.push('the attestation issuer: set KYB_ATTESTATION_ISSUER (or pass --issuer)');
  if (!audience) missing.push("the merchant's client domain UUID: set KYB_AUDIENCE (or pass --audience)");
  if (missing.length > 0)
    throw usageError(
      `release verifies the attestation like your receiver does and needs ${missing.join('; and ')}: the same values your receiver is given.`,
    );
  const client = openClient(settings, {
    attestation: { issuer: issuer!, audience: audience!, ...(jwksUrl ? { jwksUrl } : {}) },
  });
  const result = await callApi(settings, () => client.release(requestId));
  if (result.status === 'not_released') {
    if (options.json) printJson({ request_id: requestId, status: 'not_released' });
    else
      print(
        `${cellText(requestId)} is not released yet (404 not_released: not an error; pull again after the release event).`,
      );
    return EXIT.ok;
  }
  if (result.status === 'payload_expired') {
    if (options.json) {
      printJson({ request_id: requestId, status: 'payload_expired' });
      return EXIT.failed;
    }
    throw new CliError(
      `${cellText(requestId)}: 410 payload_expired: the released values were purged on schedule and cannot be signed again; create a new request.`,
    );
  }
  const { claims, answers } = result;
  const verified = {
    event_id: claims.event_id,
    seq: claims.seq,
    iss: claims.iss,
    iat: claims.iat,
    exp: claims.exp,
  };
  const rows = [...answers];
  if (options.json) {
    printJson({ request_id: requestId, status: 'released', verified, answers: rows });
    return EXIT.ok;
  }
  print(
    formatTable(rows, [
      { heading: 'subject', cell: (answer) => cellText(answer.subject) },
      { heading: 'subject_type', cell: (answer) => cellText(answer.subject_type) },
      { heading: 'name', cell: (answer) => cellText(answer.name) },
      { heading: 'value', cell: (answer) => cellText(answer.value) },
    ]),
  );
  print(
    `\u2713 verified release of ${cellText(requestId)} (event ${cellText(claims.event_id)}, seq ${cellText(claims.seq)}): ${rows.length} answers from ${answers.subjects().length} subjects.`,
  );
  return EXIT.ok;
}
