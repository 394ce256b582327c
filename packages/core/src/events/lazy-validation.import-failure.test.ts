// The zod schemas are imported on first need (a separate chunk in a bundle). When that import fails (a deploy
// replaced the chunk, a flaky network on a Web runtime), the failure answers that one value, and the next value that
// needs zod imports them again instead of finding the failure kept for good.
import { afterEach, describe, expect, it, vi } from 'vitest';

afterEach(() => {
  vi.doUnmock('../schemas.js');
  vi.resetModules();
});

describe('loadZodSchemas after a failed import', () => {
  it('rejects the value that met the failure, then imports the schemas again for the next one', async () => {
    vi.resetModules();
    let failing = true;
    vi.doMock('../schemas.js', async (importOriginal) => {
      if (failing) throw new Error('chunk load failed');
      return importOriginal();
    });
    const { createLazyValidator } = await import('./lazy-validation.js');
    const { envelopeVerdict } = await import('./schema-plans.generated.js');
    const validate = createLazyValidator(envelopeVerdict, (schemas) => schemas.envelopeSchema);

    await expect(validate({ event: 'kyb.data_request.refused' })).rejects.toThrow();

    failing = false;
    const result = await validate({ event: 'kyb.data_request.refused' });
    expect(result.success).toBe(false);
    expect(result.success || result.issues.map((issue) => issue.path.join('.'))).toContain('event_id');
  });
});
