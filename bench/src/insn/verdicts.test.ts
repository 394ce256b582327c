import { describe, expect, it } from 'vitest';
import { insnVerdicts, judge, type Measured } from './verdicts.js';

const figures = (subject: Measured['subject'], kind: Measured['kind'], scale: number): Measured => ({
  subject,
  kind,
  label: subject,
  importCost: 100e6 * scale,
  firstAnswer: 100e6 * scale,
  early: 100_000 * scale,
  steady: 50_000 * scale,
});

describe('judge', () => {
  it('is met below the limit, missed above it, and unsure within the noise either side', () => {
    expect(judge(0.9, 1, 0.03)).toBe(true);
    expect(judge(1.1, 1, 0.03)).toBe(false);
    expect(judge(0.98, 1, 0.03)).toBe('unsure');
    expect(judge(1.02, 1, 0.03)).toBe('unsure');
  });
});

describe('insnVerdicts', () => {
  it('judges every target from the figures: ratios against the right baseline, the import and bundle limits', () => {
    const lines = insnVerdicts(
      [
        figures('hand', 'hmac', 1),
        figures('stripe', 'hmac', 2),
        figures('ours', 'hmac', 1.4),
        figures('hand', 'attested', 1),
        figures('ours', 'attested', 1.5),
        figures('ours', 'ordered', 1),
        figures('ours-enforce', 'ordered', 1.1),
      ],
      100 * 1024,
    );
    expect(lines).toEqual([
      // 6.7% under the limit, beyond the 3% that repeated runs move.
      '  met     importing the core: 140.0 M instructions (target ≤ 150 M)',
      '  MISSED  process start to first answer, ours ÷ Stripe: 0.70× (target ≤ 0.50×)',
      '  met     Workers bundle: 100 KB (target ≤ 120 KB)',
      // Within the 15% the early window moves between runs: this run cannot call it.
      '  unsure  early, ours ÷ hand-written: 1.40× (target ≤ 1.50×)',
      '  met     early, ours ÷ Stripe: 0.70× (target ≤ 1.00×)',
      '  MISSED  early attested, ours ÷ hand-written: 1.50× (target ≤ 1.15×)',
      '  MISSED  steady, ours ÷ hand-written: 1.40× (target ≤ 1.15×)',
      '  met     steady, ours ÷ Stripe: 0.70× (target ≤ 1.00×)',
      '  MISSED  steady attested, ours ÷ hand-written: 1.50× (target ≤ 1.05×)',
      '  met     steady, ordering enforce ÷ off (memory store, one stream): 1.10× (target ≤ 1.20×)',
    ]);
  });

  it('reports a target whose receivers were not measured as skipped, not as met', () => {
    const lines = insnVerdicts([figures('hand', 'hmac', 1), figures('ours', 'hmac', 1)], 200 * 1024);
    expect(lines).toContain('  skipped  early attested, ours ÷ hand-written: not measured in this run');
    expect(lines).toContain('  skipped  steady, ours ÷ Stripe: not measured in this run');
    expect(lines).toContain('  MISSED  Workers bundle: 200 KB (target ≤ 120 KB)');
  });
});

describe('the Fastify pair', () => {
  it('adds an info line, ours ÷ hand-written inside the same app, early and steady, when both were measured', () => {
    const base = [figures('hand', 'hmac', 1), figures('ours', 'hmac', 1)];
    const lines = insnVerdicts(
      [...base, figures('hand-fastify', 'hmac', 2), { ...figures('ours-fastify', 'hmac', 2.5), steady: 110_000 }],
      100 * 1024,
    );
    expect(lines.at(-1)).toBe('  info    in Fastify (inject), ours ÷ hand-written: early 1.25×, steady 1.10×');
    expect(insnVerdicts(base, 100 * 1024).some((line) => line.includes('Fastify'))).toBe(false);
  });
});
