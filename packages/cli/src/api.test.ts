import { describe, expect, it } from 'vitest';
import { CliError, EXIT } from './errors.js';
import { KybApiError } from '@kyb-webhooks/client';
import { apiFailure, apiSettings, cellText, isoTime, openClient, redact, timeMs } from './api.js';
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

describe('the per-request path templates', () => {
  const env = {
    KYB_API_KEY: 'kyb_env',
    KYB_BASE_URL: 'http://127.0.0.1:9',
    KYB_DATA_REQUEST_PATH: '/v2/data/{id}',
    KYB_SIGNATURE_REQUEST_PATH: '/v2/signatures/{id}',
  };

  it('come from the environment, a flag winning, and are left out when unset', () => {
    expect(apiSettings({}, env)).toMatchObject({
      dataRequestPath: '/v2/data/{id}',
      signatureRequestPath: '/v2/signatures/{id}',
    });
    expect(apiSettings({ dataRequestPath: '/v3/dr/{id}' }, env)).toMatchObject({ dataRequestPath: '/v3/dr/{id}' });
    expect(apiSettings({}, { KYB_API_KEY: 'k', KYB_BASE_URL: 'http://127.0.0.1:9' })).toEqual({
      apiKey: 'k',
      baseUrl: 'http://127.0.0.1:9',
    });
  });

  it('reach the client: each kind of request is asked for under its template', async () => {
    const paths: string[] = [];
    const fetch = async (input: RequestInfo | URL) => {
      paths.push(new URL(String(input)).pathname);
      return Response.json({ deliveries: [], has_more: false });
    };
    const client = openClient(apiSettings({}, env), { fetch });
    await client.deliveries('dr_1');
    await client.deliveries('sr_1');
    expect(paths).toEqual(['/v2/data/dr_1/deliveries', '/v2/signatures/sr_1/deliveries']);
  });

  it('a template the client refuses is a usage error naming the flag and the variable', () => {
    const settings = apiSettings({ dataRequestPath: '/v2/data' }, env);
    const error = (() => {
      try {
        openClient(settings);
      } catch (caught) {
        return caught as CliError;
      }
    })();
    expect(error).toBeInstanceOf(CliError);
    expect(error?.exitCode).toBe(EXIT.usage);
    expect(error?.message).toContain('must hold {id} once');
    expect(error?.message).toContain('(the template comes from --data-request-path or KYB_DATA_REQUEST_PATH)');
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
