import { KybWebhookError } from '@kyb-webhooks/core';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TABLE, parseTableName } from './table-name.js';

describe('table name validation', () => {
  it('accepts plain and schema-qualified identifiers', () => {
    expect(parseTableName()).toEqual({ schema: undefined, table: DEFAULT_TABLE });
    expect(parseTableName('Kyb_Events2')).toEqual({ schema: undefined, table: 'Kyb_Events2' });
    expect(parseTableName('audit._events')).toEqual({ schema: 'audit', table: '_events' });
    expect(parseTableName('t'.repeat(48))).toEqual({ schema: undefined, table: 't'.repeat(48) });
  });

  it.each([
    '',
    ' ',
    '1events',
    'events;',
    'events; DROP TABLE users',
    'events"--',
    'events`',
    "events'",
    'a.b.c',
    '.events',
    'events.',
    'évents',
    'events name',
    't'.repeat(49),
  ])('rejects %j with config_invalid', (name) => {
    expect(() => parseTableName(name)).toThrow(KybWebhookError);
    try {
      parseTableName(name);
    } catch (error) {
      expect((error as KybWebhookError).code).toBe('config_invalid');
    }
  });

  it('rejects a table name that is not a string', () => {
    expect(() => parseTableName(42 as unknown as string)).toThrow(/identifier/);
  });
});
