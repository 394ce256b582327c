/** The instruction-count targets of issue 28 §2 as verdict lines, from the measured figures. */
import { bytes, ratio, verdict } from '../report.js';
import type { InsnKind, SubjectName } from './protocol.js';

/** One receiver's figures: cold costs beyond node (instructions) and per-delivery slopes. */
export interface Measured {
  subject: SubjectName;
  kind: InsnKind;
  label: string;
  importCost: number;
  firstAnswer: number;
  early: number;
  steady: number;
}

/**
 * How close to a target a figure may fall before the run cannot call it: repeated runs agree within ~3%, the early
 * window of a fresh process within ~15% (what the JIT compiles, and when, moves it).
 */
const STEADY_NOISE = 0.03;
const EARLY_NOISE = 0.15;

/** `met` / `MISSED`, or `unsure` when the ratio is within `noise` of the limit. */
export function judge(value: number, limit: number, noise: number): boolean | 'unsure' {
  if (Math.abs(value - limit) <= limit * noise) return 'unsure';
  return value <= limit;
}

export const WORKER_BUNDLE_LIMIT = 120 * 1024;
export const IMPORT_LIMIT = 150e6;

/**
 * The verdict lines for what was measured; a target whose receivers were not measured (`--quick` runs the HMAC
 * receivers only) is reported as skipped.
 *
 * @example
 * ```ts
 * insnVerdicts(measured, bundle.total) // ['  MISSED  importing the core: 459.5 M instructions (target ≤ 150 M)', …]
 * ```
 */
export function insnVerdicts(measured: readonly Measured[], bundleBytes: number): string[] {
  const find = (subject: SubjectName, kind: InsnKind) => measured.find((m) => m.subject === subject && m.kind === kind);
  const ratioLine = (
    text: string,
    ours: Measured | undefined,
    baseline: Measured | undefined,
    figure: 'firstAnswer' | 'early' | 'steady',
    limit: number,
  ): string => {
    if (!ours || !baseline) return verdict('skipped', `${text}: not measured in this run`);
    const value = ours[figure] / baseline[figure];
    const noise = figure === 'early' ? EARLY_NOISE : STEADY_NOISE;
    return verdict(judge(value, limit, noise), `${text}: ${ratio(value)} (target ≤ ${limit.toFixed(2)}×)`);
  };
  const ours = find('ours', 'hmac');
  const hand = find('hand', 'hmac');
  const stripe = find('stripe', 'hmac');
  const oursAttested = find('ours', 'attested');
  const handAttested = find('hand', 'attested');
  const oursOrderedOff = find('ours', 'ordered');
  const oursEnforce = find('ours-enforce', 'ordered');
  return [
    ours
      ? verdict(
          judge(ours.importCost, IMPORT_LIMIT, STEADY_NOISE),
          `importing the core: ${(ours.importCost / 1e6).toFixed(1)} M instructions (target ≤ ${IMPORT_LIMIT / 1e6} M)`,
        )
      : verdict('skipped', 'importing the core: not measured in this run'),
    ratioLine('process start to first answer, ours ÷ Stripe', ours, stripe, 'firstAnswer', 0.5),
    verdict(
      bundleBytes <= WORKER_BUNDLE_LIMIT,
      `Workers bundle: ${bytes(bundleBytes)} (target ≤ ${bytes(WORKER_BUNDLE_LIMIT)})`,
    ),
    ratioLine('early, ours ÷ hand-written', ours, hand, 'early', 1.5),
    ratioLine('early, ours ÷ Stripe', ours, stripe, 'early', 1.0),
    ratioLine('early attested, ours ÷ hand-written', oursAttested, handAttested, 'early', 1.15),
    ratioLine('steady, ours ÷ hand-written', ours, hand, 'steady', 1.15),
    ratioLine('steady, ours ÷ Stripe', ours, stripe, 'steady', 1.0),
    ratioLine('steady attested, ours ÷ hand-written', oursAttested, handAttested, 'steady', 1.05),
    ratioLine('steady, ordering enforce ÷ off (memory store, one stream)', oursEnforce, oursOrderedOff, 'steady', 1.2),
    ...frameworkInfo(find('ours-fastify', 'hmac'), find('hand-fastify', 'hmac')),
  ];
}

/** Ours ÷ hand-written inside the same Fastify app (inject): information, the issue sets no target for it. */
function frameworkInfo(ours: Measured | undefined, hand: Measured | undefined): string[] {
  if (!ours || !hand) return [];
  return [
    verdict(
      'info',
      `in Fastify (inject), ours ÷ hand-written: early ${ratio(ours.early / hand.early)}, steady ${ratio(ours.steady / hand.steady)}`,
    ),
  ];
}
