import { describe, expect, it } from 'vitest';
import { timestampSchema } from './events.js';

describe('timestamps inside data', () => {
  it.each([1767225600, 1767225600123, '1767225600', '2026-12-01T00:00:00Z', '2026-12-01T00:00:00.123+02:00', '2026-12-01'])(
    'accepts %s',
    (value) => {
      expect(timestampSchema.safeParse(value).success).toBe(true);
    },
  );
  it.each(['x', '', 'tomorrow', -1, Number.POSITIVE_INFINITY, '2026-13-01', null])('rejects %s', (value) => {
    expect(timestampSchema.safeParse(value).success).toBe(false);
  });
});
