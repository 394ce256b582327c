import { describe, expect, it } from 'vitest';
import { casesFor } from './index.js';

describe('casesFor (--insn-case)', () => {
  it('keeps every case without a filter, and the named subjects or subject:kind pairs with one', () => {
    expect(casesFor(false).length).toBeGreaterThan(10);
    const telemetry = casesFor(false, ['ours:hmac', 'ours-otel-noop', 'ours-otel-sdk', 'ours-channel']);
    expect(telemetry.map((c) => `${c.subject}:${c.kind}${c.repeat ? ' (repeat)' : ''}`)).toEqual([
      'ours:hmac',
      'ours:hmac (repeat)',
      'ours-otel-noop:hmac',
      'ours-otel-sdk:hmac',
      'ours-channel:hmac',
    ]);
    expect(casesFor(false, ['ours']).map((c) => c.kind)).toEqual(['hmac', 'attested', 'ordered', 'hmac']);
  });

  it('--quick keeps the HMAC receivers it always ran, without the repeat', () => {
    expect(casesFor(true).map((c) => c.subject)).toEqual(['hand', 'stripe', 'ours']);
  });
});
