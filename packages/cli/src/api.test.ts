import { describe, expect, it } from 'vitest';
import { CliError, EXIT } from './errors.js';
import { KybApiError } from '@kyb-webhooks/client';
import { apiFailure, apiSettings, cellText, isoTime, redact, timeMs } from './api.js';
import { createProgram } from './program.js';

// The shared pieces of the API commands, in process; the commands' own tests run them end to end.
describe('apiSettings', () => {
  it('reads the environment; a flag wins', () => {
    const env = { KYB_API_KEY: 'kyb_env', KYB_BASE_URL: 'https://env.example.com' };
    expect(apiSettings({}, env)).toEqual({ apiKey: 'kyb_env', baseUrl: 'https://env.example.com' });
    expect(apiSettings({ apiKey: 'kyb_flag', baseUrl: 'https://flag.example.com' }, env)).toEqual({
      apiKey: 'kyb_flag',
      baseUrl: 'https://flag.example.com',
    });
  });

  it('a missing key or URL is a usage error naming the variable and the flag', () => {
    const error = (() => {
      try {
        apiSettings({}, { KYB_API_KEY: '' });
      } catch (caught) {
        return caught as CliError;
      }
    })();
    expect(error).toBeInstanceOf(CliError);
    expect(error?.exitCode).toBe(EXIT.usage);
    expect(error?.message).toContain('set KYB_API_KEY (or pass --api-key)');
    expect(error?.message).toContain('set KYB_BASE_URL (or pass --base-url)');
  });
});

describe('apiFailure', () => {
  it('says the code, the status and the fix, and never the key, even when a message quoted it', () => {
    const failure = apiFailure(
      new KybApiError({
        status: 401,
        code: 'unauthorized',
        message: 'GET /x: refused kyb_live_secret_key_1',
        operation: 'GET /x',
        attempts: 1,
      }),
      { apiKey: 'kyb_live_secret_key_1', baseUrl: 'https://api.example.com' },
    ) as CliError;
    expect(failure.exitCode).toBe(EXIT.failed);
    expect(failure.message).toMatch(/^KYB API error unauthorized \(HTTP 401\): GET \/x: refused \[KYB_API_KEY\]/);
    expect(failure.message).toContain('fix: check KYB_API_KEY');
    expect(failure.message).not.toContain('kyb_live_secret_key_1');
  });

  it('passes anything else through', () => {
    const error = new Error('boom');
    expect(apiFailure(error, { apiKey: 'k', baseUrl: 'https://a.example.com' })).toBe(error);
  });
});

describe('cell helpers', () => {
  it('cellText keeps control characters off the terminal', () => {
    expect(cellText('Acme\x1b[2J\n')).toBe('Acme\\u001b[2J\\u000a');
    expect(cellText({ a: 1 })).toBe('{"a":1}');
    expect(cellText(undefined)).toBe('—');
  });

  it('times in seconds, milliseconds or ISO strings', () => {
    expect(timeMs(1767225600)).toBe(1767225600000);
    expect(timeMs(1767225600000)).toBe(1767225600000);
    expect(timeMs('1767225600')).toBe(1767225600000);
    expect(timeMs('2026-01-01T00:00:00Z')).toBe(1767225600000);
    expect(timeMs(null)).toBeUndefined();
    expect(isoTime(1767225600)).toBe('2026-01-01T00:00:00.000Z');
    expect(isoTime('soon')).toBe('—');
  });

  it('redact replaces every occurrence', () => {
    expect(redact('a key_1234 b key_1234', 'key_1234')).toBe('a [KYB_API_KEY] b [KYB_API_KEY]');
  });
});

describe('the program', () => {
  it('--help lists the API commands and what they exit with', () => {
    const help = createProgram().helpInformation() + '\n';
    for (const command of ['deliveries', 'events', 'release', 'redeliver', 'reactivate', 'recover'])
      expect(help).toMatch(new RegExp(`^  ${command} `, 'm'));
  });
});
