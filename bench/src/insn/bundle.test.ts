import { describe, expect, it } from 'vitest';
import { packageOf } from './bundle.js';

describe('packageOf', () => {
  it('names the package of a bundled input, scoped or not, pnpm store or workspace', () => {
    expect(packageOf('../../node_modules/.pnpm/zod@4.6.7/node_modules/zod/v4/core/core.js')).toBe('zod');
    expect(
      packageOf('node_modules/.pnpm/@standard-schema+spec@1/node_modules/@standard-schema/spec/dist/index.js'),
    ).toBe('@standard-schema/spec');
    expect(packageOf('../../packages/core/dist/chunk-JCRHCDBJ.js')).toBe('@kyb-webhooks/core');
    expect(packageOf('worker.js')).toBe('(the handler)');
  });
});
