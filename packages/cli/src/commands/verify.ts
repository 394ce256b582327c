import {
  createReceiver,
  KybWebhookError,
  parseSignatureHeader,
  type LogEntry,
  type ReceiverOptions,
} from '@kyb-webhooks/core';
import type { Command } from 'commander';
import { carriedAttestation, expiredNote, signedByDevKey } from '../attestation-age.js';
import { readCaptureFile, readHeadersAndBody, type Capture } from '../capture.js';
import { CHECKS, UNAUTHENTICATED_NOTE, checkOf, fixFor, type Check } from '../codes.js';
import { loadDevKeys, type DevKeys } from '../dev-keys.js';
import { CliError, EXIT, usageError } from '../errors.js';
import { withCommonOptions, type CommonOptions } from '../options.js';
import { formatTable, print, printJson, shownEventId, shownEventType } from '../output.js';

/**
 * Options of `verify`.
 *
 * @example
 * ```ts
 * const options: VerifyOptions = { keys, headers: 'headers.txt', body: 'body.json' }
 * ```
 */
export interface VerifyOptions extends CommonOptions {
  headers?: string;
  body?: string;
  fromEnv?: boolean;
  atSignatureTime?: boolean;
}

/**
 * The verdict on one captured delivery: the receiver's answer and, per pipeline check, how it went.
 *
 * @example
 * ```ts
 * const report = await verifyCapture(capture, receiverOptions, false)
 * if (!report.ok) console.log(report.failedCheck, report.code, report.fix)
 * ```
 */
export interface VerifyReport {
  source: string;
  ok: boolean;
  status: number;
  code: string | null;
  message: string | null;
  /** Which claim or key version failed, from the receiver's log entry; never body content or secrets. */
  detail: string | null;
  fix: string | null;
  failedCheck: Check | 'receiver' | null;
  checks: { check: Check; result: 'passed' | 'failed' | 'not reached' | 'none carried' | 'not configured' }[];
  /** Shown only when well-formed (a `kyb.` type, a ULID): the body is unauthenticated text. */
  event: { type: string; event_id: string } | null;
  /** What else the user needs to know, e.g. that the attestation expired. */
  notes: string[];
}

/**
 * Registers `verify [captures...]` / `verify --headers <file> --body <file>`.
 *
 * @example
 * ```ts
 * registerVerify(program) // kyb-webhooks verify captures/01JH….json
 * ```
 */
export function registerVerify(program: Command): void {
  withCommonOptions(
    program
      .command('verify')
      .description(
        'check captured deliveries with the same core the receiver uses, and say which check failed and how to fix it',
      )
      .argument(
        '[captures...]',
        'capture files (written by send --save / scenario --save, or {"headers":{…},"body":"…"})',
      ),
  )
    .option(
      '--headers <file>',
      'the delivery\u2019s headers: a JSON object, or "Name: value" lines as curl -D writes them',
    )
    .option('--body <file>', 'the delivery\u2019s exact body bytes')
    .option(
      '--from-env',
      'check with KYB_SECRET_V<n>, KYB_ATTESTATION_ISSUER, KYB_AUDIENCE and KYB_JWKS_URL from the environment instead of the development keys',
    )
    .option('--at-signature-time', 'check as of the signature\u2019s t, so an old capture is not rejected as expired')
    .action(async (files: string[], options: VerifyOptions) => {
      process.exitCode = await runVerify(files, options);
    });
}

/**
 * Runs `verify`; returns the exit code (1 when any capture does not verify).
 *
 * @example
 * ```ts
 * const code = await runVerify(['capture.json'], { keys: '.kyb-webhooks/dev-keys.json' })
 * ```
 */
export async function runVerify(files: string[], options: VerifyOptions): Promise<number> {
  const captures: Capture[] = files.map(readCaptureFile);
  if (options.headers !== undefined || options.body !== undefined) {
    if (options.headers === undefined || options.body === undefined)
      throw usageError('--headers and --body go together: give both files (or a capture file instead).');
    captures.push(readHeadersAndBody(options.headers, options.body));
  }
  if (captures.length === 0)
    throw usageError('Nothing to verify: give capture files, or --headers <file> --body <file>.');
  const { receiverOptions, source, devKeys } = verificationConfig(options);
  const reports: VerifyReport[] = [];
  for (const capture of captures)
    reports.push(await verifyCapture(capture, receiverOptions, options.atSignatureTime === true, devKeys));
  const ok = reports.every((report) => report.ok);
  if (options.json) {
    printJson({ ok, checkedWith: source, reports });
    return ok ? EXIT.ok : EXIT.failed;
  }
  for (const report of reports) {
    print(`${report.source}${report.event ? `: ${report.event.type} ${report.event.event_id}` : ''}`);
    print(
      formatTable(report.checks, [
        { heading: 'check', cell: (row) => row.check },
        { heading: 'result', cell: (row) => (row.result === 'failed' ? `FAILED: ${report.code}` : row.result) },
      ]),
    );
    if (report.ok)
      print(`\u2713 verifies: the receiver would answer ${report.status}${report.code ? ` ${report.code}` : ''}.`);
    else {
      print(`\u2717 ${report.status} ${report.code}: ${report.message}`);
      if (report.detail) print(`  detail: ${report.detail}`);
      print(`  fix: ${report.fix}`);
    }
    for (const note of report.notes) print(`  note: ${note}`);
    print('');
  }
  print(`Checked with ${source}.`);
  return ok ? EXIT.ok : EXIT.failed;
}

function verificationConfig(options: VerifyOptions): {
  receiverOptions: Omit<ReceiverOptions, 'now' | 'logger'>;
  source: string;
  devKeys?: DevKeys;
} {
  if (options.fromEnv) {
    const secrets = Object.fromEntries(
      Object.entries(process.env)
        .filter(([name, value]) => /^KYB_SECRET_V\d+$/.test(name) && value)
        .map(([name, value]) => [name.slice('KYB_SECRET_V'.length), value as string]),
    );
    const { KYB_ATTESTATION_ISSUER: issuer, KYB_AUDIENCE: audience, KYB_JWKS_URL: jwksUrl } = process.env;
    if (Object.keys(secrets).length === 0 && !(issuer && audience && jwksUrl)) {
      throw usageError(
        '--from-env found neither KYB_SECRET_V<n> nor KYB_ATTESTATION_ISSUER, KYB_AUDIENCE and KYB_JWKS_URL in the environment.',
      );
    }
    return {
      receiverOptions: {
        ...(Object.keys(secrets).length > 0 ? { secrets } : {}),
        ...(issuer && audience && jwksUrl ? { attestation: { issuer, audience, jwksUrl } } : {}),
      },
      source: `the environment (${[...Object.keys(secrets).map((version) => `KYB_SECRET_V${version}`), ...(issuer && audience && jwksUrl ? ['KYB_ATTESTATION_ISSUER', 'KYB_AUDIENCE', 'KYB_JWKS_URL'] : [])].join(', ')})`,
    };
  }
  // Keys made up now would fail every capture and blame it: checking needs the keys the deliveries were signed with.
  const { keys, file } = loadDevKeys(options.keys);
  return {
    receiverOptions: {
      secrets: { ...keys.secrets },
      attestation: { issuer: keys.issuer, audience: keys.audience, jwks: { keys: [keys.publicJwk] } },
    },
    source: `the development keys in ${file} (use --from-env for your environment's secrets)`,
    devKeys: keys,
  };
}

/**
 * Verifies one capture with a fresh receiver (memory store, no handlers) and reports which check failed.
 *
 * @example
 * ```ts
 * const report = await verifyCapture(readCaptureFile('c.json'), { secrets, attestation }, false)
 * ```
 */
export async function verifyCapture(
  capture: Capture,
  receiverOptions: Omit<ReceiverOptions, 'now' | 'logger'>,
  atSignatureTime: boolean,
  devKeys?: DevKeys,
): Promise<VerifyReport> {
  const entries: LogEntry[] = [];
  let nowMs = Date.now();
  if (atSignatureTime) {
    try {
      const header = capture.headers['service-kyb-signature'];
      if (header !== undefined) nowMs = parseSignatureHeader(header).timestamp * 1000;
    } catch {}
  }
  let receiver;
  try {
    receiver = createReceiver({ ...receiverOptions, now: () => nowMs, logger: (entry) => entries.push(entry) });
  } catch (error) {
    if (error instanceof KybWebhookError)
      throw new CliError(`The verification settings are invalid: ${error.message}`, EXIT.usage);
    throw error;
  }
  const result = await receiver.receive({ method: capture.method, headers: capture.headers, body: capture.body });
  const accepted = result.status >= 200 && result.status < 300;
  const code = result.code ?? null;
  const carriesAttestation = hasAttestation(capture.body);
  const failedCheck = accepted || code === null ? null : checkOf(code);
  const failedIndex = failedCheck === null || failedCheck === 'receiver' ? -1 : CHECKS.indexOf(failedCheck);
  const checks = CHECKS.map((check, index) => {
    let state: VerifyReport['checks'][number]['result'];
    if (failedIndex === -1) state = 'passed';
    else state = index < failedIndex ? 'passed' : index === failedIndex ? 'failed' : 'not reached';
    if (check === 'attestation' && state === 'passed' && !carriesAttestation) state = 'none carried';
    // A receiver without secrets (--from-env with only the attestation settings) does not check the HMAC at all.
    if (check === 'signature' && state === 'passed' && receiverOptions.secrets === undefined) state = 'not configured';
    return { check, result: state };
  });
  const notes: string[] = [];
  // Whatever failed first, an expired attestation defeats any replay of this capture: say so, and what can be done.
  const attestation = carriedAttestation(capture.body);
  if (attestation !== undefined && attestation.exp * 1000 < nowMs) {
    notes.push(
      expiredNote(
        attestation,
        devKeys === undefined ? 'unknown' : signedByDevKey(attestation, devKeys) ? 'dev' : 'other',
      ),
    );
  }
  if (code === 'unauthenticated') notes.push(`200 unauthenticated: ${UNAUTHENTICATED_NOTE}`);
  const entry =
    entries.find((candidate) => candidate.code === code) ?? entries.find((candidate) => candidate.level !== 'debug');
  const event = result.event
    ? { type: shownEventType(result.event.event), event_id: shownEventId(result.event.event_id) }
    : eventOf(capture.body);
  return {
    source: capture.source,
    ok: accepted,
    status: result.status,
    code,
    message: accepted ? null : 'error' in result.body ? result.body.error.message : null,
    detail: accepted ? null : (entry?.detail ?? null),
    fix: accepted ? null : fixFor(code ?? undefined, capture.headers),
    failedCheck,
    checks,
    event,
    notes,
  };
}

function parseBody(body: Uint8Array): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function hasAttestation(body: Uint8Array): boolean {
  return typeof parseBody(body)?.attestation === 'string';
}

// Only the type and id are shown, and only when well-formed: the body is unauthenticated text.
function eventOf(body: Uint8Array): VerifyReport['event'] {
  const parsed = parseBody(body);
  if (parsed?.event === undefined && parsed?.event_id === undefined) return null;
  return { type: shownEventType(parsed.event), event_id: shownEventId(parsed.event_id) };
}
