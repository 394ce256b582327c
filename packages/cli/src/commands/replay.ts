import { basename } from 'node:path';
import type { Command } from 'commander';
import type { TestEnvelope } from '@kyb-webhooks/testing';
import { carriedAttestation, expiredNote, reattest, signedByDevKey } from '../attestation-age.js';
import { readCaptureFile, replayHeaders, saveCapture, signatureVersionOf, type Capture } from '../capture.js';
import { UNAUTHENTICATED_NOTE } from '../codes.js';
import { EXIT, usageError } from '../errors.js';
import { displayUrl, withSendingOptions, type SendingOptions } from '../options.js';
import { createProgress, formatTable, print, printJson, shownEventId, shownEventType } from '../output.js';
import type { SentDelivery } from '../post.js';
import { openSession, type Session } from '../session.js';
import { explainFailure } from './send.js';

/**
 * Options of `replay`.
 *
 * @example
 * ```ts
 * const options: ReplayOptions = { to, keys, timeout: 10_000, resign: true }
 * ```
 */
export interface ReplayOptions extends SendingOptions {
  resign?: boolean;
  /** With `resign`: the secret version to sign with instead of the capture's own `kv`. */
  secretVersion?: string;
}

/**
 * Registers `replay <captures...> --to <url>`.
 *
 * @example
 * ```ts
 * registerReplay(program) // kyb-webhooks replay captures/*.json --to http://127.0.0.1:3000/webhooks/kyb --resign
 * ```
 */
export function registerReplay(program: Command): void {
  withSendingOptions(
    program
      .command('replay')
      .description('post captured deliveries again, byte for byte, and show what the app answered')
      .argument('<captures...>', 'capture files (send --save / scenario --save, or {"headers":{…},"body":"…"})'),
  )
    .option(
      '--resign',
      'replace the HMAC header with a fresh one (same kv, current time) made with the development keys, so captures older than 5 minutes are not rejected as expired; an expired attestation the development key signed is re-issued too',
    )
    .option(
      '--secret-version <kv>',
      'with --resign: sign with this secret version of the development keys instead of the capture\u2019s kv',
    )
    .action(async (files: string[], options: ReplayOptions) => {
      process.exitCode = await runReplay(files, options);
    });
}

/**
 * Runs `replay`; returns the exit code (1 when any delivery was not accepted with a 2xx).
 *
 * @example
 * ```ts
 * const code = await runReplay(['a.json', 'b.json'], { to, keys, timeout: 10_000 })
 * ```
 */
export async function runReplay(files: string[], options: ReplayOptions): Promise<number> {
  if (options.secretVersion !== undefined && !options.resign) {
    throw usageError(
      '--secret-version re-signs the captures: give --resign with it (replay sends the captured header as it is otherwise).',
    );
  }
  const captures = files.map(readCaptureFile);
  const attested = captures.some((capture) => typeof parse(capture.body)?.attestation === 'string');
  // Re-signing needs the keys the dev server was given; a plain replay sends the capture's own bytes and headers.
  const session = await openSession(options, { needsJwks: attested, keys: options.resign ? 'require' : 'optional' });
  const rows: { capture: Capture; sent: SentDelivery; notes: string[] }[] = [];
  try {
    // Everything is prepared before anything is sent: exit 2 means nothing was sent.
    const prepared: Prepared[] = [];
    for (const capture of captures) prepared.push(await prepare(capture, options, session));
    const progress = createProgress(prepared.length, options.json === true);
    try {
      for (const [index, { capture, headers, body, notes }] of prepared.entries()) {
        progress.update(capture.source);
        rows.push({ capture, notes, sent: await session.post({ envelope: envelopeOf(capture), headers, body }) });
        // What was sent (re-signed or not), so a replay can itself be verified or replayed.
        if (options.save)
          saveCapture(options.save, `replay-${index + 1}-${basename(capture.source).replace(/\.json$/, '')}`, {
            url: displayUrl(options.to),
            headers,
            body,
          });
      }
    } finally {
      // Cleared whatever happens, so an error message does not land on the progress line.
      progress.done();
    }
  } finally {
    await session.close();
  }
  const accepted = (sent: SentDelivery) => sent.status !== null && sent.status >= 200 && sent.status < 300;
  const ok = rows.every((row) => accepted(row.sent));
  const to = displayUrl(options.to);
  if (options.json) {
    printJson({
      ok,
      to,
      deliveries: rows.map(({ capture, sent, notes }) => ({
        capture: capture.source,
        event: sent.envelope.event,
        event_id: sent.envelope.event_id,
        status: sent.status,
        code: sent.code ?? null,
        error: sent.error ?? null,
        ok: accepted(sent),
        ...(notes.length > 0 ? { notes } : {}),
      })),
    });
    return ok ? EXIT.ok : EXIT.failed;
  }
  print(
    formatTable(rows, [
      { heading: 'capture', cell: (row) => row.capture.source },
      { heading: 'event', cell: (row) => row.sent.envelope.event.replace(/^kyb\./, '') },
      { heading: 'event_id', cell: (row) => row.sent.envelope.event_id },
      {
        heading: 'status',
        cell: (row) => (row.sent.status === null ? (row.sent.error ?? 'no answer') : String(row.sent.status)),
      },
      { heading: 'code', cell: (row) => row.sent.code ?? '—' },
    ]),
  );
  for (const row of rows) {
    if (!accepted(row.sent)) print(`${row.capture.source}: ${explainFailure(row.sent, to)}`);
    for (const note of row.notes) print(`${row.capture.source}: note: ${note}`);
    if (row.sent.code === 'unauthenticated')
      print(`${row.capture.source}: note: 200 unauthenticated: ${UNAUTHENTICATED_NOTE}`);
  }
  print(
    ok
      ? `\u2713 all ${rows.length} accepted.`
      : `\u2717 ${rows.filter((row) => !accepted(row.sent)).length} of ${rows.length} not accepted. Which check failed, and why: kyb-webhooks verify <capture>.`,
  );
  return ok ? EXIT.ok : EXIT.failed;
}

interface Prepared {
  capture: Capture;
  headers: Record<string, string>;
  body: Uint8Array;
  /** What replay changed or what will defeat it, said after the table. */
  notes: string[];
}

// The headers and bytes to send for one capture, or a usage error before anything was sent.
async function prepare(capture: Capture, options: ReplayOptions, session: Session): Promise<Prepared> {
  const headers = replayHeaders(capture.headers);
  let body = capture.body;
  const notes: string[] = [];
  const carried = carriedAttestation(capture.body);
  const attestation = carried !== undefined && carried.exp * 1000 < Date.now() ? carried : undefined; // only an expired one matters here
  const devKeySigned =
    attestation !== undefined && session.keysFile !== undefined && signedByDevKey(attestation, session.keys);
  if (options.resign) {
    const version = options.secretVersion ?? signatureVersionOf(headers) ?? session.keys.currentVersion;
    // A version the development keys lack could only be signed with another version's secret: refuse, say which exist.
    if (!Object.hasOwn(session.keys.secrets, version)) {
      const known = Object.keys(session.keys.secrets).sort().join(', ');
      throw usageError(
        `${capture.source} is signed with kv=${version}, which the development keys do not have (they have ${known}): add --secret-version <one of them>.`,
      );
    }
    // A fresh HMAC alone does not revive an expired attestation: the receiver would answer 401 attestation_invalid.
    const renewed =
      attestation !== undefined && devKeySigned ? await reattest(attestation, session.signer, body) : undefined;
    if (renewed !== undefined && attestation !== undefined) {
      body = renewed;
      notes.push(
        `re-attested with the development key: its attestation had expired at ${new Date(attestation.exp * 1000).toISOString()} (same claims, new iat and exp)`,
      );
    } else if (attestation !== undefined) {
      notes.push(expiredNote(attestation, 'other'));
    }
    headers['service-kyb-signature'] = session.signer.kit.hmacHeader(body, { version });
  } else if (attestation !== undefined) {
    notes.push(expiredNote(attestation, session.keysFile === undefined ? 'unknown' : devKeySigned ? 'dev' : 'other'));
  }
  return { capture, headers, body, notes };
}

function parse(body: Uint8Array): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(new TextDecoder().decode(body));
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

// Only for the table: the bytes sent are the capture's own, whatever this finds in them. The body and headers are
// unauthenticated, so only values of the expected shape are shown.
function envelopeOf(capture: Capture): TestEnvelope {
  const body = parse(capture.body);
  return {
    event: body === undefined || body.event === undefined ? '(not an envelope)' : shownEventType(body.event),
    event_id: shownEventId(body?.event_id ?? capture.headers['service-event-id']),
    stream_id: '—',
    seq: typeof body?.seq === 'number' ? body.seq : 0,
    timestamp: typeof body?.timestamp === 'number' ? body.timestamp : 0,
    api_version: '',
    data: {},
  };
}
