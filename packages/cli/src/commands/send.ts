import { Option, type Command } from 'commander';
import {
  ATTESTED_TEST_EVENT_TYPES,
  createTestEvent,
  type TestEnvelope,
  type TestEventType,
} from '@kyb-webhooks/testing';
import { saveCapture } from '../capture.js';
import { UNAUTHENTICATED_NOTE, fixFor, routeHint } from '../codes.js';
import { EXIT, usageError } from '../errors.js';
import {
  displayUrl,
  parseEventType,
  parseIntegerAtLeast,
  parseJsonObject,
  withSendingOptions,
  type SendingOptions,
} from '../options.js';
import { createProgress, formatTable, print, printJson, shorten } from '../output.js';
import { NOT_SENT, type SentDelivery } from '../post.js';
import { describeExpectation, matches, type Expectation } from '../scenarios.js';
import { openSession, type Session } from '../session.js';

/**
 * Options of `send`.
 *
 * @example
 * ```ts
 * const options: SendOptions = { to, keys, timeout: 10_000, seq: 2, duplicate: true }
 * ```
 */
export interface SendOptions extends SendingOptions {
  stream?: string;
  requestId?: string;
  seq?: number;
  eventId?: string;
  attempt?: number;
  duplicate?: boolean;
  reason?: string;
  previousWalletAddress?: string;
  walletAddress?: string;
  digest?: string;
  offerId?: string;
  data?: Record<string, unknown>;
  secretVersion?: string;
  attestation?: boolean;
}

/**
 * Registers `send <event-type> --to <url>`.
 *
 * @example
 * ```ts
 * registerSend(program) // kyb-webhooks send data_request.released --to http://127.0.0.1:3000/webhooks/kyb
 * ```
 */
export function registerSend(program: Command): void {
  withSendingOptions(
    program
      .command('send')
      .description(
        'send one realistic signed delivery of an event type (attested types carry an attestation signed by the dev key)',
      )
      .argument(
        '<event-type>',
        'data_request.pending_approval | data_request.released | data_request.refused | signature_request.pending_approval | signature_request.signed | signature_request.refused | business.wallet_address_changed',
        parseEventType,
      ),
  )
    .option('--stream <id>', 'stream_id (the request id for data and signature requests)')
    .option('--request-id <id>', 'same as --stream')
    .addOption(new Option('--seq <n>', 'seq within the stream').argParser(parseIntegerAtLeast(0)))
    .option('--event-id <ulid>', 'event_id (default a fresh ULID)')
    .addOption(new Option('--attempt <n>', 'Service-Delivery-Attempt').argParser(parseIntegerAtLeast(1)))
    .option(
      '--duplicate',
      'send it twice with the same event_id (the second as the next attempt): a correct receiver answers the second "200 duplicate"',
    )
    .option('--reason <reason>', 'refusal reason (refused types), e.g. threshold_not_met')
    .option('--previous-wallet-address <address>', 'previous_wallet_address (business.wallet_address_changed)')
    .option('--wallet-address <address>', 'the new wallet_address (business.wallet_address_changed)')
    .option('--digest <hex>', 'digest (signature request types)')
    .option('--offer-id <id>', 'offer_id (data_request.pending_approval claimed from a QR offer)')
    .addOption(
      new Option('--data <json>', 'JSON object merged over data; a null value removes that field').argParser(
        parseJsonObject,
      ),
    )
    .option('--secret-version <kv>', 'sign the HMAC with this secret version (default the current one)')
    .option(
      '--no-attestation',
      'leave the attestation out (a correct receiver answers attested types "401 attestation_missing")',
    )
    .action(async (type: TestEventType, options: SendOptions) => {
      process.exitCode = await runSend(type, options);
    });
}

/**
 * Runs `send`; returns the exit code.
 *
 * @example
 * ```ts
 * const code = await runSend('kyb.data_request.released', { to, keys, timeout: 10_000 })
 * ```
 */
export async function runSend(type: TestEventType, options: SendOptions): Promise<number> {
  const envelope = buildEnvelope(type, options);
  const attested = options.attestation !== false && ATTESTED_TEST_EVENT_TYPES.has(type);
  // An attested type sent without its attestation is the negative test of spec 5.6: the receiver must refuse it.
  const unattested = options.attestation === false && ATTESTED_TEST_EVENT_TYPES.has(type);
  const session = await openSession(options, { needsJwks: attested, keys: 'create' });
  const rows: (SentDelivery & { label: string; ok: boolean; expected: Expectation; why?: string })[] = [];
  try {
    checkSecretVersion(options.secretVersion, session);
    // A release names the key of its attestation; make it the dev key unless --data set it.
    if (type === 'kyb.data_request.released' && options.data?.attestation_kid === undefined)
      envelope.data.attestation_kid = session.keys.kid;
    const signOptions = {
      ...(options.secretVersion === undefined ? {} : { version: options.secretVersion }),
      ...(options.attestation === false ? { attest: false } : {}),
    };
    // Attest once: a redelivery carries the same token, as the service keeps it across retries.
    const carried = await session.signer.withAttestation(envelope, signOptions);
    const firstAttempt = options.attempt ?? 1;
    const attempts = options.duplicate ? [firstAttempt, firstAttempt + 1] : [firstAttempt];
    const progress = createProgress(attempts.length, options.json === true);
    try {
      for (const [index, attempt] of attempts.entries()) {
        const label = index === 0 ? 'delivery' : 'same event_id again';
        progress.update(label);
        const signed = await session.signer.sign(carried, { ...signOptions, attempt });
        const sent = await session.post(signed);
        if (options.save)
          saveCapture(options.save, `${carried.event_id}-attempt-${attempt}`, {
            url: displayUrl(options.to),
            headers: signed.headers,
            body: signed.body,
          });
        const { expected, why } = expectationFor(index, unattested, type, rows[0]);
        // A first delivery is fine with any 2xx (a "200 unauthenticated" is noted below the table).
        const ok = expected.status === '2xx' ? isAccepted(sent) : matches(sent, [expected]);
        rows.push({ ...sent, label, ok, expected, ...(why ? { why } : {}) });
      }
    } finally {
      // Cleared whatever happens, so an error message does not land on the progress line.
      progress.done();
    }
  } finally {
    await session.close();
  }
  const ok = rows.every((row) => row.ok);
  const to = displayUrl(options.to);
  const unauthenticated = rows.some((row) => row.code === 'unauthenticated');
  if (options.json) {
    printJson({
      ok,
      to,
      jwks: session.jwks ?? null,
      deliveries: rows.map((row) => ({
        delivery: row.label,
        event: row.envelope.event,
        event_id: row.envelope.event_id,
        stream_id: row.envelope.stream_id,
        seq: row.envelope.seq,
        attempt: Number(row.headers['service-delivery-attempt']),
        attested: row.envelope.attestation !== undefined,
        status: row.status,
        code: row.code ?? null,
        error: row.error ?? null,
        expected: describeExpectation(row.expected),
        ok: row.ok,
      })),
      ...(unauthenticated ? { note: UNAUTHENTICATED_NOTE } : {}),
    });
    return ok ? EXIT.ok : EXIT.failed;
  }
  print(
    formatTable(rows, [
      { heading: 'delivery', cell: (row) => row.label },
      { heading: 'event', cell: (row) => row.envelope.event.replace(/^kyb\./, '') },
      { heading: 'event_id', cell: (row) => row.envelope.event_id },
      { heading: 'stream/seq', cell: (row) => `${shorten(row.envelope.stream_id, 24)}/${row.envelope.seq}` },
      { heading: 'attempt', cell: (row) => row.headers['service-delivery-attempt'] ?? '' },
      { heading: 'attested', cell: (row) => (row.envelope.attestation !== undefined ? 'yes' : 'no') },
      { heading: 'status', cell: (row) => (row.status === null ? (row.error ?? 'no answer') : String(row.status)) },
      { heading: 'code', cell: (row) => row.code ?? '—' },
      { heading: 'expected', cell: (row) => describeExpectation(row.expected) },
      { heading: 'result', cell: (row) => (row.ok ? 'ok' : 'FAILED') },
    ]),
  );
  for (const row of rows.filter((candidate) => !candidate.ok)) print(explainFailure(row, to, row.why));
  if (unauthenticated) print(`note: 200 unauthenticated: ${UNAUTHENTICATED_NOTE}`);
  return ok ? EXIT.ok : EXIT.failed;
}

const ACCEPTED: Expectation = { status: '2xx', code: null };

function isAccepted(sent: SentDelivery): boolean {
  return sent.status !== null && sent.status >= 200 && sent.status < 300;
}

// What a correct receiver answers the delivery at `index` (0: the first, 1: the --duplicate redelivery).
function expectationFor(
  index: number,
  unattested: boolean,
  type: TestEventType,
  first: SentDelivery | undefined,
): { expected: Expectation; why?: string } {
  if (unattested) {
    return {
      expected: { status: 401, code: 'attestation_missing' },
      why: `a correct receiver answers 401 attestation_missing: ${type.slice(4)} must carry an attestation (spec 5.6), so one without it is refused before any handler runs or the event_id is claimed`,
    };
  }
  if (index === 0) return { expected: ACCEPTED };
  // A receiver without HMAC secrets never claims an unauthenticated event_id, so the redelivery is unauthenticated too.
  if (first?.status === 200 && first.code === 'unauthenticated')
    return { expected: { status: 200, code: 'unauthenticated' } };
  return { expected: { status: 200, code: 'duplicate' } };
}

// The signer would sign an unknown version with the current version's secret under the asked kv (a test kit feature
// for unknown-kv tests), and an empty one makes a malformed header: neither is what --secret-version means.
function checkSecretVersion(version: string | undefined, session: Session): void {
  if (version === undefined || Object.hasOwn(session.keys.secrets, version)) return;
  const known = Object.keys(session.keys.secrets).sort().join(', ');
  throw usageError(
    `--secret-version ${version}: the development keys have no such secret version (they have ${known}); give one of them.`,
  );
}

/**
 * One line saying why a delivery did not get the answer a correct receiver gives, and what to do. `to` is the URL as
 * the output shows it ({@link displayUrl}); `why` says what a correct receiver answers when that is not simply a 2xx.
 *
 * @example
 * ```ts
 * explainFailure({ status: null, error: 'network error (ECONNREFUSED)' }, to) // 'could not reach … is your dev server running …'
 * ```
 */
export function explainFailure(
  sent: Pick<SentDelivery, 'status' | 'code' | 'error'> & Partial<Pick<SentDelivery, 'headers'>>,
  to: string,
  why?: string,
): string {
  if (sent.status === null) {
    if (sent.error?.startsWith(NOT_SENT)) return `\u2717 ${sent.error}`;
    return `\u2717 no answer from ${to} (${sent.error ?? 'network error'}): is your dev server running and listening there?`;
  }
  const answer = `${sent.status}${sent.code ? ` ${sent.code}` : ''}`;
  const fix = sent.code !== undefined ? fixFor(sent.code, sent.headers) : '';
  if (why !== undefined) return `\u2717 ${answer}: ${why}.${fix !== '' ? `\n  ${sent.code}: ${fix}` : ''}`;
  if (fix !== '') return `\u2717 ${answer}: ${fix}`;
  const route = routeHint(sent, to);
  if (route !== undefined) return `\u2717 ${sent.status}: ${route}`;
  return `\u2717 ${answer}: not what a correct receiver answers here.`;
}

function buildEnvelope(type: TestEventType, options: SendOptions): TestEnvelope {
  if (options.stream !== undefined && options.requestId !== undefined && options.stream !== options.requestId) {
    throw usageError('--stream and --request-id name the same value (the stream is the request); give one of them.');
  }
  const only = (flag: string, value: unknown, types: readonly TestEventType[]) => {
    if (value !== undefined && !types.includes(type))
      throw usageError(
        `${flag} applies to ${types.map((t) => t.slice(4)).join(', ')}, not to ${type.slice(4)}; put other fields in --data.`,
      );
  };
  only('--reason', options.reason, ['kyb.data_request.refused', 'kyb.signature_request.refused']);
  only('--previous-wallet-address', options.previousWalletAddress, ['kyb.business.wallet_address_changed']);
  only('--wallet-address', options.walletAddress, ['kyb.business.wallet_address_changed']);
  only('--digest', options.digest, [
    'kyb.signature_request.pending_approval',
    'kyb.signature_request.signed',
    'kyb.signature_request.refused',
  ]);
  only('--offer-id', options.offerId, ['kyb.data_request.pending_approval']);
  const fields: Record<string, unknown> = {};
  if (options.reason !== undefined) fields.reason = options.reason;
  if (options.previousWalletAddress !== undefined) fields.previous_wallet_address = options.previousWalletAddress;
  if (options.walletAddress !== undefined) fields.wallet_address = options.walletAddress;
  if (options.digest !== undefined) fields.digest = options.digest;
  if (options.offerId !== undefined) fields.offer_id = options.offerId;
  checkDataKeys(type, options);
  const stream = options.stream ?? options.requestId;
  const envelope = createTestEvent(type, {
    ...(stream === undefined ? {} : { stream_id: stream }),
    ...(options.seq === undefined ? {} : { seq: options.seq }),
    ...(options.eventId === undefined ? {} : { event_id: options.eventId }),
    data: { ...fields, ...options.data },
  });
  // JSON has no undefined: null in --data is how a user drops a field (an optional price, say).
  for (const [name, value] of Object.entries(options.data ?? {})) if (value === null) delete envelope.data[name];
  return envelope;
}

// Fields of the envelope, and data fields that must equal one of them: --data setting one would make a delivery that
// contradicts itself (and its attestation, which signs them), so each has its typed flag.
const ENVELOPE_FIELDS: Record<string, string> = {
  request_id: 'it is the stream of the request (and a claim of the attestation); use --request-id <id>',
  stream_id: 'it is a field of the envelope, not of data; use --stream <id>',
  event_id: 'it is a field of the envelope, not of data; use --event-id <ulid>',
  seq: 'it is a field of the envelope, not of data; use --seq <n>',
};
// The other claims the attestation signs (spec 2.8): a data field of the same name must equal the signed value.
const CLAIM_NAMES = ['iss', 'aud', 'iat', 'exp', 'answers', 'event', 'event_type'];

function checkDataKeys(type: TestEventType, options: SendOptions): void {
  const attested = options.attestation !== false && ATTESTED_TEST_EVENT_TYPES.has(type);
  // null removes a field, which contradicts nothing.
  for (const [name, value] of Object.entries(options.data ?? {})) {
    if (value === null) continue;
    const reason =
      ENVELOPE_FIELDS[name] ??
      (attested && CLAIM_NAMES.includes(name)
        ? 'the attestation signs a claim of that name, so the delivery would contradict it'
        : undefined);
    if (reason !== undefined) throw usageError(`--data cannot set ${name}: ${reason}.`);
  }
}
