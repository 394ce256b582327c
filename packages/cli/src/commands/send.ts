import { Option, type Command } from 'commander';
import { ATTESTED_TEST_EVENT_TYPES, createTestEvent, type TestEnvelope, type TestEventType } from '@kyb-webhooks/testing';
import { saveCapture } from '../capture.js';
import { fixFor, routeHint } from '../codes.js';
import { EXIT, usageError } from '../errors.js';
import { parseEventType, parseIntegerAtLeast, parseJsonObject, withSendingOptions, type SendingOptions } from '../options.js';
import { createProgress, formatTable, print, printJson, shorten } from '../output.js';
import type { SentDelivery } from '../post.js';
import { openSession } from '../session.js';

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
      .description('send one realistic signed delivery of an event type (attested types carry an attestation signed by the dev key)')
      .argument('<event-type>', 'data_request.pending_approval | data_request.released | data_request.refused | signature_request.pending_approval | signature_request.signed | signature_request.refused | business.wallet_address_changed', parseEventType),
  )
    .option('--stream <id>', 'stream_id (the request id for data and signature requests)')
    .option('--request-id <id>', 'same as --stream')
    .addOption(new Option('--seq <n>', 'seq within the stream').argParser(parseIntegerAtLeast(0)))
    .option('--event-id <ulid>', 'event_id (default a fresh ULID)')
    .addOption(new Option('--attempt <n>', 'Service-Delivery-Attempt').argParser(parseIntegerAtLeast(1)))
    .option('--duplicate', 'send it twice with the same event_id (the second as the next attempt): a correct receiver answers the second "200 duplicate"')
    .option('--reason <reason>', 'refusal reason (refused types), e.g. threshold_not_met')
    .option('--previous-wallet-address <address>', 'previous_wallet_address (business.wallet_address_changed)')
    .option('--wallet-address <address>', 'the new wallet_address (business.wallet_address_changed)')
    .option('--digest <hex>', 'digest (signature request types)')
    .option('--offer-id <id>', 'offer_id (data_request.pending_approval claimed from a QR offer)')
    .addOption(new Option('--data <json>', 'JSON object merged over data; a null value removes that field').argParser(parseJsonObject))
    .option('--secret-version <kv>', 'sign the HMAC with this secret version (default the current one)')
    .option('--no-attestation', 'leave the attestation out (a correct receiver answers attested types "401 attestation_missing")')
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
  const session = await openSession(options, { needsJwks: attested });
  // A release names the key of its attestation; make it the dev key unless --data set it.
  if (type === 'kyb.data_request.released' && options.data?.attestation_kid === undefined) envelope.data.attestation_kid = session.keys.kid;
  const rows: (SentDelivery & { label: string; ok: boolean; expected: string })[] = [];
  try {
    const signOptions = { ...(options.secretVersion === undefined ? {} : { version: options.secretVersion }), ...(options.attestation === false ? { attest: false } : {}) };
    // Attest once: a redelivery carries the same token, as the service keeps it across retries.
    const carried = await session.signer.withAttestation(envelope, signOptions);
    const firstAttempt = options.attempt ?? 1;
    const attempts = options.duplicate ? [firstAttempt, firstAttempt + 1] : [firstAttempt];
    const progress = createProgress(attempts.length, options.json === true);
    for (const [index, attempt] of attempts.entries()) {
      const label = index === 0 ? 'delivery' : 'same event_id again';
      progress.update(label);
      const signed = await session.signer.sign(carried, { ...signOptions, attempt });
      const sent = await session.post(signed);
      if (options.save) saveCapture(options.save, `${carried.event_id}-attempt-${attempt}`, { url: options.to, headers: signed.headers, body: signed.body });
      // The first delivery of a genuine event must be accepted; the second must be recognised as a duplicate.
      const expected = index === 0 ? '2xx' : '200 duplicate';
      const ok = index === 0 ? isAccepted(sent) : sent.status === 200 && sent.code === 'duplicate';
      rows.push({ ...sent, label, ok, expected });
    }
    progress.done();
  } finally {
    await session.close();
  }
  const ok = rows.every((row) => row.ok);
  if (options.json) {
    printJson({
      ok,
      to: options.to,
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
        expected: row.expected,
        ok: row.ok,
      })),
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
      { heading: 'expected', cell: (row) => row.expected },
      { heading: 'result', cell: (row) => (row.ok ? 'ok' : 'FAILED') },
    ]),
  );
  for (const row of rows.filter((candidate) => !candidate.ok)) print(explainFailure(row, options.to));
  return ok ? EXIT.ok : EXIT.failed;
}

function isAccepted(sent: SentDelivery): boolean {
  return sent.status !== null && sent.status >= 200 && sent.status < 300;
}

/**
 * One line saying why a delivery did not get the answer a correct receiver gives, and what to do.
 *
 * @example
 * ```ts
 * explainFailure({ status: null, error: 'network error (ECONNREFUSED)' }, to) // 'could not reach … is your dev server running …'
 * ```
 */
export function explainFailure(sent: Pick<SentDelivery, 'status' | 'code' | 'error'> & Partial<Pick<SentDelivery, 'headers'>>, to: string): string {
  if (sent.status === null) return `\u2717 no answer from ${to} (${sent.error ?? 'network error'}): is your dev server running and listening there?`;
  if (sent.code !== undefined && fixFor(sent.code) !== '') return `\u2717 ${sent.status} ${sent.code}: ${fixFor(sent.code, sent.headers)}`;
  const route = routeHint(sent, to);
  if (route !== undefined) return `\u2717 ${sent.status}: ${route}`;
  return `\u2717 ${sent.status}${sent.code ? ` ${sent.code}` : ''}: not what a correct receiver answers here.`;
}

function buildEnvelope(type: TestEventType, options: SendOptions): TestEnvelope {
  if (options.stream !== undefined && options.requestId !== undefined && options.stream !== options.requestId) {
    throw usageError('--stream and --request-id name the same value (the stream is the request); give one of them.');
  }
  const only = (flag: string, value: unknown, types: readonly TestEventType[]) => {
    if (value !== undefined && !types.includes(type)) throw usageError(`${flag} applies to ${types.map((t) => t.slice(4)).join(', ')}, not to ${type.slice(4)}; put other fields in --data.`);
  };
  only('--reason', options.reason, ['kyb.data_request.refused', 'kyb.signature_request.refused']);
  only('--previous-wallet-address', options.previousWalletAddress, ['kyb.business.wallet_address_changed']);
  only('--wallet-address', options.walletAddress, ['kyb.business.wallet_address_changed']);
  only('--digest', options.digest, ['kyb.signature_request.pending_approval', 'kyb.signature_request.signed', 'kyb.signature_request.refused']);
  only('--offer-id', options.offerId, ['kyb.data_request.pending_approval']);
  const fields: Record<string, unknown> = {};
  if (options.reason !== undefined) fields.reason = options.reason;
  if (options.previousWalletAddress !== undefined) fields.previous_wallet_address = options.previousWalletAddress;
  if (options.walletAddress !== undefined) fields.wallet_address = options.walletAddress;
  if (options.digest !== undefined) fields.digest = options.digest;
  if (options.offerId !== undefined) fields.offer_id = options.offerId;
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
