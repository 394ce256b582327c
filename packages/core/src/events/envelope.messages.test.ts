// envelopeSchema is public (`@kyb-webhooks/core/schemas`): code that parses an envelope itself reads zod's issues, and
// each rule of spec 2.3 names what it expected in words.
import { describe, expect, it } from 'vitest';
import { testEvents } from '../../test-kit.js';
import { envelopeSchema } from './envelope.js';

function issuesFor(change: Record<string, unknown>) {
  const parsed = envelopeSchema.safeParse({ ...testEvents.dataRequestRefused(), ...change });
  return parsed.success
    ? []
    : parsed.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message }));
}

describe('envelopeSchema explains each refusal', () => {
  it.each<[string, Record<string, unknown>, string, string]>([
    [
      'an event type with a space',
      { event: 'kyb.data_request refused' },
      'event',
      'printable ASCII without spaces, at most 200 characters',
    ],
    ['an event id that is no ULID', { event_id: 'evt_1' }, 'event_id', 'a 26-character ULID'],
    ['an api_version that is not a date', { api_version: 'v1' }, 'api_version', 'a date-shaped version YYYY-MM-DD'],
    ['data that is not an object', { data: [] }, 'data', 'data must be an object'],
    ['data that is null', { data: null }, 'data', 'data must be an object'],
  ])('%s', (_what, change, path, message) => {
    expect(issuesFor(change)).toEqual([{ path, message }]);
  });

  it('accepts the unchanged envelope', () => {
    expect(issuesFor({})).toEqual([]);
  });
});
