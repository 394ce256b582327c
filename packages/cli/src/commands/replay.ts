import type { Command } from 'commander';
import type { TestEnvelope } from '@kyb-webhooks/testing';
import { readCaptureFile, replayHeaders, signatureVersionOf, type Capture } from '../capture.js';
import { EXIT, usageError } from '../errors.js';
import { withSendingOptions, type SendingOptions } from '../options.js';
import { createProgress, formatTable, print, printJson } from '../output.js';
import type { SentDelivery } from '../post.js';
import { openSession } from '../session.js';
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
    .option('--resign', 'replace the HMAC header with a fresh one (same kv, current time) made with the development keys, so captures older than 5 minutes are not rejected as expired')
    .option('--secret-version <kv>', 'with --resign: sign with this secret version of the development keys instead of the capture\u2019s kv')
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
    throw usageError('--secret-version re-signs the captures: give --resign with it (replay sends the captured header as it is otherwise).');
  }
  const captures = files.map(readCaptureFile);
  const attested = captures.some((capture) => typeof parse(capture.body)?.attestation === 'string');
  const session = await openSession(options, { needsJwks: attested });
  const rows: { capture: Capture; sent: SentDelivery }[] = [];
  try {
    const progress = createProgress(captures.length, options.json === true);
    for (const capture of captures) {
      progress.update(capture.source);
      const headers = replayHeaders(capture.headers);
      if (options.resign) {
        const version = options.secretVersion ?? signatureVersionOf(headers) ?? session.keys.currentVersion;
        // A version the development keys lack could only be signed with another version's secret: refuse, say which exist.
        if (session.keys.secrets[version] === undefined) {
          const known = Object.keys(session.keys.secrets).sort().join(', ');
          throw usageError(`${capture.source} is signed with kv=${version}, which the development keys do not have (they have ${known}): add --secret-version <one of them>.`);
        }
        headers['service-kyb-signature'] = session.signer.kit.hmacHeader(capture.body, { version });
      }
      rows.push({ capture, sent: await session.post({ envelope: envelopeOf(capture), headers, body: capture.body }) });
    }
    progress.done();
  } finally {
    await session.close();
  }
  const accepted = (sent: SentDelivery) => sent.status !== null && sent.status >= 200 && sent.status < 300;
  const ok = rows.every((row) => accepted(row.sent));
  if (options.json) {
    printJson({
      ok,
      to: options.to,
      deliveries: rows.map(({ capture, sent }) => ({
        capture: capture.source,
        event: sent.envelope.event,
        event_id: sent.envelope.event_id,
        status: sent.status,
        code: sent.code ?? null,
        error: sent.error ?? null,
        ok: accepted(sent),
      })),
    });
    return ok ? EXIT.ok : EXIT.failed;
  }
  print(
    formatTable(rows, [
      { heading: 'capture', cell: (row) => row.capture.source },
      { heading: 'event', cell: (row) => row.sent.envelope.event.replace(/^kyb\./, '') },
      { heading: 'event_id', cell: (row) => row.sent.envelope.event_id },
      { heading: 'status', cell: (row) => (row.sent.status === null ? (row.sent.error ?? 'no answer') : String(row.sent.status)) },
      { heading: 'code', cell: (row) => row.sent.code ?? '—' },
    ]),
  );
  for (const row of rows.filter((candidate) => !accepted(candidate.sent))) print(`${row.capture.source}: ${explainFailure(row.sent, options.to)}`);
  print(ok ? `\u2713 all ${rows.length} accepted.` : `\u2717 ${rows.filter((row) => !accepted(row.sent)).length} of ${rows.length} not accepted. Which check failed, and why: kyb-webhooks verify <capture>.`);
  return ok ? EXIT.ok : EXIT.failed;
}

function parse(body: Uint8Array): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(new TextDecoder().decode(body));
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

// Only for the table: the bytes sent are the capture's own, whatever this finds in them.
function envelopeOf(capture: Capture): TestEnvelope {
  const body = parse(capture.body) ?? {};
  const text = (value: unknown, fallback: string) => (typeof value === 'string' ? value.slice(0, 80) : fallback);
  return {
    event: text(body.event, '(not an envelope)'),
    event_id: text(body.event_id, capture.headers['service-event-id'] ?? '—'),
    stream_id: text(body.stream_id, '—'),
    seq: typeof body.seq === 'number' ? body.seq : 0,
    timestamp: typeof body.timestamp === 'number' ? body.timestamp : 0,
    api_version: text(body.api_version, ''),
    data: {},
  };
}
