import { describe, expect, it } from 'vitest';
import { insnVerdicts, judge, measuredNoise, telemetryVerdicts, type Measured } from './verdicts.js';

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
        figures('ours-enforce', 'ordered', 1.05),
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
      '  met     steady, ordering enforce ÷ off (memory store, one stream): 1.05× (target ≤ 1.20×)',
    ]);
  });

  it('calls a steady ratio only when the window less V8 compiling and collecting garbage agrees with the whole', () => {
    const engine = (compiling: number, collecting: number) => ({ compiling, collecting });
    const steadyLine = (ours: Measured, stripe: Measured) =>
      insnVerdicts([figures('hand', 'hmac', 1), stripe, ours], 100 * 1024).find((line) =>
        line.includes('steady, ours ÷ Stripe'),
      );
    // A Node 26 measurement (callgrind, 6,000 → 10,000 deliveries, one fixture): a TurboFan compile and a major GC in
    // ours' window, little in Stripe's; less both, the two cost nearly the same.
    const ours = { ...figures('ours', 'hmac', 1), steady: 155_148, steadyEngine: engine(12_387, 17_516) };
    const stripe = { ...figures('stripe', 'hmac', 1), steady: 129_132, steadyEngine: engine(3_429, 1_986) };
    expect(steadyLine(ours, stripe)).toBe(
      "  unsure  steady, ours ÷ Stripe: 1.20× (target ≤ 1.00×); less V8's compiling and GC in the window: 1.01×",
    );
    // The whole window missed, the rest met: the lumps decide, so the run cannot call it.
    const lumpier = { ...ours, steadyEngine: engine(30_000, 20_000) };
    expect(steadyLine(lumpier, stripe)).toBe(
      "  unsure  steady, ours ÷ Stripe: 1.20× (target ≤ 1.00×); less V8's compiling and GC in the window: 0.85×",
    );
    // Both measures missed: the verdict stands.
    const slower = { ...ours, steadyEngine: engine(1_000, 1_000) };
    expect(steadyLine(slower, stripe)).toBe(
      "  MISSED  steady, ours ÷ Stripe: 1.20× (target ≤ 1.00×); less V8's compiling and GC in the window: 1.24×",
    );
    // Without the breakdown (a run that did not annotate), the whole window alone.
    const { steadyEngine: _, ...bare } = ours;
    expect(steadyLine(bare, stripe)).toBe('  MISSED  steady, ours ÷ Stripe: 1.20× (target ≤ 1.00×)');
  });

  it('judges the window less V8 compiling and GC with the spread of that figure between the two runs of ours', () => {
    const engine = (collecting: number) => ({ compiling: 0, collecting });
    const ours = { ...figures('ours', 'hmac', 1), steady: 120_000, steadyEngine: engine(20_000) };
    const stripe = { ...figures('stripe', 'hmac', 1), steady: 100_000, steadyEngine: engine(10_000) };
    const steadyLine = (again: Measured[]) =>
      insnVerdicts([figures('hand', 'hmac', 1), stripe, ours, ...again], 100 * 1024).find((line) =>
        line.includes('steady, ours ÷ Stripe'),
      );
    const tail = "less V8's compiling and GC in the window: 1.11×";
    // The repeat's total agrees, its GC does not: 100k and 85k less both, 15% apart, so 1.11× cannot be called.
    const again = { ...ours, steadyEngine: engine(35_000), repeat: true as const };
    expect(steadyLine([again])).toBe(`  unsure  steady, ours ÷ Stripe: 1.20× (target ≤ 1.00×); ${tail}`);
    // Without the repeat, the 10% assumed for a steady figure.
    expect(steadyLine([])).toBe(`  MISSED  steady, ours ÷ Stripe: 1.20× (target ≤ 1.00×); ${tail}`);
  });

  it('judges a steady ratio with the spread of the two runs of ours when the run has the repeat', () => {
    const steadyLine = (repeatScale: number | undefined) =>
      insnVerdicts(
        [
          figures('hand', 'hmac', 1),
          figures('stripe', 'hmac', 1),
          figures('ours', 'hmac', 1.08),
          ...(repeatScale === undefined ? [] : [{ ...figures('ours', 'hmac', repeatScale), repeat: true as const }]),
        ],
        100 * 1024,
      ).find((line) => line.includes('steady, ours ÷ Stripe'));
    // Two runs of ours 20% apart (Node 20's GC placement): an 8% excess cannot be called.
    expect(steadyLine(1.08 * 1.2)).toBe('  unsure  steady, ours ÷ Stripe: 1.08× (target ≤ 1.00×)');
    // Two runs that agree (Node 24): the 3% floor, so 8% is missed.
    expect(steadyLine(1.08)).toBe('  MISSED  steady, ours ÷ Stripe: 1.08× (target ≤ 1.00×)');
    // No repeat: the assumed 10%.
    expect(steadyLine(undefined)).toBe('  unsure  steady, ours ÷ Stripe: 1.08× (target ≤ 1.00×)');
  });

  it('judges an early ratio with the spread of the two runs of ours when the run has the repeat', () => {
    const earlyLine = (repeatEarly: number | undefined) => {
      const ours = { ...figures('ours', 'hmac', 1), early: 144_000 };
      return insnVerdicts(
        [
          figures('hand', 'hmac', 1),
          figures('stripe', 'hmac', 1),
          ours,
          ...(repeatEarly === undefined ? [] : [{ ...ours, early: repeatEarly, repeat: true as const }]),
        ],
        100 * 1024,
      ).find((line) => line.includes('early, ours ÷ hand-written'));
    };
    // Two runs that agree: the 3% floor, so 1.44× is under 1.50× by more than the noise.
    expect(earlyLine(144_010)).toBe('  met     early, ours ÷ hand-written: 1.44× (target ≤ 1.50×)');
    // Two runs 5% apart: 4% under the target cannot be called.
    expect(earlyLine(151_200)).toBe('  unsure  early, ours ÷ hand-written: 1.44× (target ≤ 1.50×)');
    // No repeat: the assumed 15%.
    expect(earlyLine(undefined)).toBe('  unsure  early, ours ÷ hand-written: 1.44× (target ≤ 1.50×)');
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

describe('the same-rules pair', () => {
  it('adds an info line, ours ÷ hand-written with the zod schemas, early and steady, when both were measured', () => {
    const ours = { ...figures('ours', 'hmac', 1), early: 150_000, steady: 90_000 };
    const handZod = { ...figures('hand-zod', 'hmac', 1), early: 200_000, steady: 120_000 };
    const lines = insnVerdicts([figures('hand', 'hmac', 1), ours, handZod], 100 * 1024);
    expect(lines.at(-1)).toBe('  info    same rules, ours ÷ hand-written + zod schemas: early 0.75×, steady 0.75×');
    expect(insnVerdicts([ours], 100 * 1024).some((line) => line.includes('same rules'))).toBe(false);
    const attested = [
      { ...figures('ours', 'attested', 1), early: 600_000, steady: 500_000 },
      { ...figures('hand-zod', 'attested', 1), early: 750_000, steady: 400_000 },
    ];
    expect(insnVerdicts(attested, 100 * 1024).at(-1)).toBe(
      '  info    same rules attested, ours ÷ hand-written + zod schemas: early 0.80×, steady 1.25×',
    );
  });
});

describe('telemetryVerdicts (issue 30)', () => {
  const ours = figures('ours', 'hmac', 1);
  const again = (early: number, steady: number): Measured => ({ ...ours, early, steady, repeat: true });
  const noop = (early: number, steady: number): Measured => ({
    ...figures('ours-otel-noop', 'hmac', 1),
    early,
    steady,
  });

  it('judges no provider ÷ ours against 1.02×, unsure when the ratio is within the noise measured by the repeat', () => {
    // ours measured twice: early 1% apart, steady 0.2% apart (under the 0.5% floor).
    const lines = telemetryVerdicts([ours, again(101_000, 50_100), noop(102_500, 52_000)]);
    expect(lines).toEqual([
      // 1.025 is 0.5% from the limit, within the 1% the two runs of ours differed by: this run cannot call it.
      '  unsure  telemetry with no provider ≤ 1.02× ours, early: 1.025× (noise ±1.0%)',
      // 1.04 is 2% over the limit, beyond the 0.5% floor.
      '  MISSED  telemetry with no provider ≤ 1.02× ours, steady: 1.040× (noise ±0.5%)',
    ]);
    expect(telemetryVerdicts([ours, again(100_100, 50_000), noop(100_400, 50_050)])).toEqual([
      '  met     telemetry with no provider ≤ 1.02× ours, early: 1.004× (noise ±0.5%)',
      '  met     telemetry with no provider ≤ 1.02× ours, steady: 1.001× (noise ±0.5%)',
    ]);
  });

  it('never takes the repeat for the baseline, assumes 3% when ours was measured once, and adds the SDK and channel as info', () => {
    const lines = telemetryVerdicts([
      noop(100_500, 50_500),
      again(200_000, 100_000),
      ours,
      { ...figures('ours-otel-sdk', 'hmac', 1), early: 180_000, steady: 75_000 },
      { ...figures('ours-channel', 'hmac', 1), early: 103_000, steady: 51_000 },
    ]);
    expect(lines[0]).toBe('  unsure  telemetry with no provider ≤ 1.02× ours, early: 1.005× (noise ±100.0%)');
    expect(telemetryVerdicts([ours, noop(100_500, 50_500)])[1]).toBe(
      '  unsure  telemetry with no provider ≤ 1.02× ours, steady: 1.010× (noise ±3.0%, assumed: ours was measured once)',
    );
    expect(lines.slice(2)).toEqual([
      '  info    openTelemetry() on the SDK (tracer and meter providers) ÷ ours: early 1.800×, steady 1.500×',
      '  info    a kyb-webhooks:receive tracing-channel subscriber ÷ ours: early 1.030×, steady 1.020×',
    ]);
  });

  it('is empty when no telemetry case was measured, and skipped without ours', () => {
    expect(telemetryVerdicts([ours, again(100_000, 50_000)])).toEqual([]);
    expect(telemetryVerdicts([noop(100_000, 50_000)])).toEqual([
      '  skipped  telemetry with no provider ≤ 1.02× ours: ours (HMAC) not measured in this run',
    ]);
  });

  it('measures the noise as the relative spread of the two runs of ours, at least 0.5%', () => {
    expect(measuredNoise(100_000, 103_000)).toBeCloseTo(0.03);
    expect(measuredNoise(100_000, 97_000)).toBeCloseTo(0.03);
    expect(measuredNoise(100_000, 100_001)).toBe(0.005);
  });
});
