import { Argument, Option, type Command } from 'commander';
import { saveCapture } from '../capture.js';
import { HMAC_PRECONDITION, fixFor, routeHint } from '../codes.js';
import { EXIT } from '../errors.js';
import { displayUrl, withSendingOptions, type SendingOptions } from '../options.js';
import { createProgress, formatTable, print, printJson } from '../output.js';
import { NOT_SENT, type SentDelivery } from '../post.js';
import {
  ORDERING_MODES,
  SCENARIOS,
  SCENARIO_NAMES,
  allowed,
  describeExpectation,
  matches,
  modesAfter,
  type OrderingMode,
  type ScenarioStep,
} from '../scenarios.js';
import { openSession } from '../session.js';

/**
 * Options of `scenario`.
 *
 * @example
 * ```ts
 * const options: ScenarioOptions = { to, keys, timeout: 10_000, phase: 'after' }
 * ```
 */
export interface ScenarioOptions extends SendingOptions {
  phase: 'overlap' | 'after';
  ordering?: OrderingMode;
}

interface StepResult {
  step: ScenarioStep;
  sent: SentDelivery;
  ok: boolean;
  /** The ordering modes this step was judged under: the receiver's, as far as the earlier answers showed it. */
  modes: readonly OrderingMode[];
}

/**
 * Registers `scenario <name> --to <url>`.
 *
 * @example
 * ```ts
 * registerScenario(program) // kyb-webhooks scenario forged-hmac --to http://127.0.0.1:3000/webhooks/kyb
 * ```
 */
export function registerScenario(program: Command): void {
  const list = SCENARIO_NAMES.map((name) => `  ${name.padEnd(24)}${SCENARIOS[name]!.description}`).join('\n');
  withSendingOptions(
    program
      .command('scenario')
      .description(
        'play a scenario against your dev server and check each answer against what a correct receiver answers',
      )
      .addArgument(new Argument('<name>', 'the scenario').choices(SCENARIO_NAMES))
      .addHelpText('after', `\nScenarios:\n${list}`),
  )
    .addOption(
      new Option('--phase <phase>', 'secret-rotation: during the overlap, or after it ended')
        .choices(['overlap', 'after'])
        .default('overlap'),
    )
    .addOption(
      new Option(
        '--ordering <mode>',
        'the receiver\u2019s ordering mode, to expect exactly its answers (default: the mode its first mode-dependent answer shows, then that mode\u2019s answers)',
      ).choices(['off', 'detect', 'enforce']),
    )
    .action(async (name: string, options: ScenarioOptions) => {
      process.exitCode = await runScenario(name, options);
    });
}

/**
 * Runs one scenario; returns the exit code (1 when any answer differs from a correct receiver's).
 *
 * @example
 * ```ts
 * const code = await runScenario('duplicate', { to, keys, timeout: 10_000, phase: 'overlap' })
 * ```
 */
export async function runScenario(name: string, options: ScenarioOptions): Promise<number> {
  const scenario = SCENARIOS[name]!;
  const session = await openSession(options, { needsJwks: scenario.attested, keys: 'create' });
  const results: StepResult[] = [];
  // A receiver runs one ordering mode: once an answer shows which, later steps expect exactly that mode's answers.
  let modes: readonly OrderingMode[] = options.ordering ? [options.ordering] : ORDERING_MODES;
  let precondition: string | undefined;
  try {
    const steps = scenario.steps({ signer: session.signer, keys: session.keys, phase: options.phase });
    const progress = createProgress(steps.length, options.json === true);
    try {
      for (const [index, step] of steps.entries()) {
        progress.update(step.label);
        const outgoing = await step.make();
        const sent = await session.post(outgoing);
        if (options.save)
          saveCapture(options.save, `${name}-${index + 1}-${step.label}`, {
            url: displayUrl(options.to),
            headers: outgoing.headers,
            body: outgoing.body,
          });
        results.push({ step, sent, ok: matches(sent, step.expect, modes), modes });
        modes = modesAfter(sent, step.expect, modes);
        // A receiver without HMAC secrets acknowledges every unattested delivery unread: nothing here can judge it.
        if (scenario.needsHmac && sent.status === 200 && sent.code === 'unauthenticated') {
          precondition = HMAC_PRECONDITION;
          break;
        }
        // Without an answer the rest would only repeat the same network error.
        if (sent.status === null) break;
      }
    } finally {
      // Cleared whatever happens, so an error message does not land on the progress line.
      progress.done();
    }
  } finally {
    await session.close();
  }
  const ok =
    precondition === undefined &&
    results.every((result) => result.ok) &&
    results.length > 0 &&
    results.at(-1)!.sent.status !== null;
  const expected = (result: StepResult) => allowed(result.step.expect, result.modes).map(describeExpectation);
  const resultOf = (result: StepResult) => (precondition !== undefined ? 'not judged' : result.ok ? 'ok' : 'DIFFERS');
  const to = displayUrl(options.to);
  // The mode the answers showed, when the user did not say it and the scenario depends on it.
  const inferred = !options.ordering && modes.length < ORDERING_MODES.length ? modes : undefined;
  if (options.json) {
    printJson({
      scenario: name,
      to,
      ok,
      ...(precondition !== undefined ? { precondition } : {}),
      ...(name === 'secret-rotation' ? { phase: options.phase } : {}),
      ...(options.ordering ? { ordering: options.ordering } : {}),
      ...(inferred ? { inferredOrdering: inferred } : {}),
      jwks: session.jwks ?? null,
      steps: results.map((result) => ({
        step: result.step.label,
        event: result.sent.envelope.event,
        event_id: result.sent.envelope.event_id,
        stream_id: result.sent.envelope.stream_id,
        seq: result.sent.envelope.seq,
        attempt: Number(result.sent.headers['service-delivery-attempt']),
        status: result.sent.status,
        code: result.sent.code ?? null,
        error: result.sent.error ?? null,
        expected: expected(result),
        ok: precondition === undefined && result.ok,
        ...(result.ok || precondition !== undefined ? {} : { why: result.step.why }),
      })),
    });
    return ok ? EXIT.ok : EXIT.failed;
  }
  print(`scenario ${name}: ${scenario.description}`);
  print('');
  print(
    formatTable(results, [
      { heading: 'step', cell: (result) => result.step.label },
      { heading: 'event', cell: (result) => result.sent.envelope.event.replace(/^kyb\./, '') },
      { heading: 'seq', cell: (result) => String(result.sent.envelope.seq) },
      {
        heading: 'status',
        cell: (result) =>
          result.sent.status === null ? (result.sent.error ?? 'no answer') : String(result.sent.status),
      },
      { heading: 'code', cell: (result) => result.sent.code ?? '—' },
      { heading: 'a correct receiver answers', cell: (result) => expected(result).join(' or ') },
      { heading: 'result', cell: resultOf },
    ]),
  );
  print('');
  if (precondition !== undefined) {
    print(`\u2717 precondition: ${precondition}`);
    return EXIT.failed;
  }
  if (inferred) print(`Ordering mode, from the answers: ${inferred.join(' or ')} (pass --ordering to say which).`);
  const failed = results.filter((result) => !result.ok);
  for (const result of failed) {
    if (result.sent.status === null) {
      if (result.sent.error?.startsWith(NOT_SENT)) print(`\u2717 ${result.step.label}: ${result.sent.error}`);
      else
        print(
          `\u2717 ${result.step.label}: no answer from ${to} (${result.sent.error ?? 'network error'}): is your dev server running and listening there?`,
        );
      continue;
    }
    print(
      `\u2717 ${result.step.label}: got ${result.sent.status}${result.sent.code ? ` ${result.sent.code}` : ''}; ${result.step.why}.`,
    );
    if (result.sent.code !== undefined && fixFor(result.sent.code) !== '')
      print(`  ${result.sent.code}: ${fixFor(result.sent.code, result.sent.headers)}`);
    const route = routeHint(result.sent, options.to);
    if (route !== undefined) print(`  ${route}`);
  }
  print(
    ok
      ? `\u2713 every answer is what a correct receiver gives (${results.length} of ${results.length} steps).`
      : `\u2717 ${failed.length} of ${results.length} steps answered differently from a correct receiver.`,
  );
  if (name === 'secret-rotation' && options.phase === 'overlap' && ok) {
    print(
      `  Next: end the overlap (remove KYB_SECRET_V${session.keys.previousVersion} or give it a notAfter in the past), restart, and run with --phase after.`,
    );
  }
  return ok ? EXIT.ok : EXIT.failed;
}
