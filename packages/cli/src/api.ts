import { KybWebhookError } from '@kyb-webhooks/core';
import {
  createKybClient,
  DEFAULT_DATA_REQUEST_PATH,
  DEFAULT_SIGNATURE_REQUEST_PATH,
  isKybApiError,
  type KybClient,
  type KybClientOptions,
} from '@kyb-webhooks/client';
import { Option, type Command } from 'commander';
import { CliError, EXIT, usageError } from './errors.js';

/**
 * The environment variable the API key is read from when `--api-key` is not given.
 *
 * @example
 * ```ts
 * process.env[API_KEY_ENV] // the key from the KYB dashboard
 * ```
 */
export const API_KEY_ENV = 'KYB_API_KEY';

/**
 * The environment variable the API's `{base_url}` is read from when `--base-url` is not given.
 *
 * @example
 * ```ts
 * process.env[BASE_URL_ENV] // 'https://api.kyb.example.com'
 * ```
 */
export const BASE_URL_ENV = 'KYB_BASE_URL';

/**
 * The environment variable holding the path template of a data request's per-request operations (`{id}` where the
 * request id goes): the spec does not show it (4.2), so the client's default is a guess.
 *
 * @example
 * ```ts
 * process.env[DATA_REQUEST_PATH_ENV] // '/api/v1/kyb/data-requests/{id}'
 * ```
 */
export const DATA_REQUEST_PATH_ENV = 'KYB_DATA_REQUEST_PATH';

/**
 * The same for signature requests (request ids starting `sr_`).
 *
 * @example
 * ```ts
 * process.env[SIGNATURE_REQUEST_PATH_ENV] // '/api/v1/kyb/signature-requests/{id}'
 * ```
 */
export const SIGNATURE_REQUEST_PATH_ENV = 'KYB_SIGNATURE_REQUEST_PATH';

/**
 * Options every command over the KYB API takes (`--api-key`, `--base-url`, `--json`).
 *
 * @example
 * ```ts
 * const options: ApiOptions = { baseUrl: 'https://api.kyb.example.com', json: true }
 * ```
 */
export interface ApiOptions {
  apiKey?: string;
  baseUrl?: string;
  dataRequestPath?: string;
  signatureRequestPath?: string;
  json?: boolean;
}

/**
 * Where the API is and the key it takes, resolved from flags and environment (a flag wins).
 *
 * @example
 * ```ts
 * const settings: ApiSettings = apiSettings(options)
 * ```
 */
export interface ApiSettings {
  apiKey: string;
  baseUrl: string;
  /** The per-request path templates, when set (else the client's defaults). */
  dataRequestPath?: string;
  signatureRequestPath?: string;
}

/**
 * Adds `--api-key`, `--base-url`, the two per-request path templates and `--json` to a command over the KYB API.
 *
 * @example
 * ```ts
 * withApiOptions(program.command('deliveries').argument('<request-id>'))
 * ```
 */
export function withApiOptions(command: Command): Command {
  return command
    .addOption(
      new Option(
        '--api-key <key>',
        `the KYB API key (default $${API_KEY_ENV}; prefer the variable: a flag shows in the shell history and process list)`,
      ),
    )
    .option('--base-url <url>', `the KYB API's {base_url} (default $${BASE_URL_ENV}), e.g. https://api.kyb.example.com`)
    .option(
      '--data-request-path <template>',
      `where a data request's deliveries, events and redeliver live, {id} for the request id (default $${DATA_REQUEST_PATH_ENV}, else ${DEFAULT_DATA_REQUEST_PATH})`,
    )
    .option(
      '--signature-request-path <template>',
      `the same for signature requests, ids starting sr_ (default $${SIGNATURE_REQUEST_PATH_ENV}, else ${DEFAULT_SIGNATURE_REQUEST_PATH})`,
    )
    .option('--json', 'print the result as JSON for scripts');
}

/**
 * Reads the API key and base URL from the flags, else the environment. A missing one is a usage error (exit 2) that
 * names the variable and the flag; the key itself is never part of any message.
 *
 * @example
 * ```ts
 * const { apiKey, baseUrl } = apiSettings({ baseUrl: 'http://127.0.0.1:4010' }, { KYB_API_KEY: 'kyb_live_…' })
 * ```
 */
export function apiSettings(options: ApiOptions, env: NodeJS.ProcessEnv = process.env): ApiSettings {
  const apiKey = options.apiKey ?? env[API_KEY_ENV];
  const baseUrl = options.baseUrl ?? env[BASE_URL_ENV];
  const missing: string[] = [];
  if (apiKey === undefined || apiKey === '')
    missing.push(`the API key: set ${API_KEY_ENV} (or pass --api-key) to the key from the KYB dashboard`);
  if (baseUrl === undefined || baseUrl === '')
    missing.push(
      `the API address: set ${BASE_URL_ENV} (or pass --base-url) to the KYB API's {base_url}, e.g. https://api.kyb.example.com`,
    );
  if (missing.length > 0) throw usageError(`this command calls the KYB API and needs ${missing.join('; and ')}.`);
  const settings: ApiSettings = { apiKey: apiKey!, baseUrl: baseUrl! };
  const dataRequestPath = options.dataRequestPath ?? env[DATA_REQUEST_PATH_ENV];
  const signatureRequestPath = options.signatureRequestPath ?? env[SIGNATURE_REQUEST_PATH_ENV];
  if (dataRequestPath) settings.dataRequestPath = dataRequestPath;
  if (signatureRequestPath) settings.signatureRequestPath = signatureRequestPath;
  return settings;
}

/**
 * Creates the typed client for the settings. A setting the client refuses (a base URL that is not https off the
 * machine, a key with a line break) is a usage error naming the flag and variable; its message never holds the key.
 *
 * @example
 * ```ts
 * const client = openClient(apiSettings(options), { attestation: { issuer, audience } })
 * ```
 */
export function openClient(settings: ApiSettings, extra: Omit<KybClientOptions, 'apiKey' | 'baseUrl'> = {}): KybClient {
  try {
    const { dataRequestPath, signatureRequestPath } = settings;
    return createKybClient({
      ...extra,
      apiKey: settings.apiKey,
      baseUrl: settings.baseUrl,
      ...(dataRequestPath === undefined ? {} : { dataRequestPath }),
      ...(signatureRequestPath === undefined ? {} : { signatureRequestPath }),
    });
  } catch (error) {
    if (error instanceof KybWebhookError) {
      // The option a problem is about opens its line (a fix may name another option, e.g. `apiKey` in baseUrl's).
      const about = refusesOption(error.message, 'apiKey')
        ? ` (the API key comes from --api-key or ${API_KEY_ENV})`
        : refusesOption(error.message, 'baseUrl')
          ? ` (the address comes from --base-url or ${BASE_URL_ENV})`
          : refusesOption(error.message, 'dataRequestPath')
            ? ` (the template comes from --data-request-path or ${DATA_REQUEST_PATH_ENV})`
            : refusesOption(error.message, 'signatureRequestPath')
              ? ` (the template comes from --signature-request-path or ${SIGNATURE_REQUEST_PATH_ENV})`
              : '';
      throw usageError(redact(`${error.message}${about}`, settings.apiKey));
    }
    throw error;
  }
}

/**
 * Turns a failure of a KYB API call into a {@link CliError} (exit 1) that says the client's code and the HTTP
 * status, and how to fix it (401 → check KYB_API_KEY). Anything else is passed through. The key is never in the
 * message, even if some layer quoted it.
 *
 * @example
 * ```ts
 * try { await client.reactivate() } catch (error) { throw apiFailure(error, settings) }
 * ```
 */
export function apiFailure(error: unknown, settings: ApiSettings): unknown {
  if (!isKybApiError(error)) return error;
  const status = error.status === null ? 'no HTTP answer' : `HTTP ${error.status}`;
  const fix = fixForApiError(error.code, error.status);
  return new CliError(
    redact(
      `KYB API error ${error.code} (${status}): ${error.message}${fix === '' ? '' : `\n  fix: ${fix}`}`,
      settings.apiKey,
    ),
    EXIT.failed,
  );
}

/**
 * What to do about a KYB API error code (or status), for the line under the error; empty when there is nothing
 * better to say than the message.
 *
 * @example
 * ```ts
 * fixForApiError('unauthorized', 401) // 'check KYB_API_KEY (or --api-key): …'
 * ```
 */
export function fixForApiError(code: string, status: number | null): string {
  if (code === 'unauthorized' || status === 401)
    return `check ${API_KEY_ENV} (or --api-key): it must be the API key from the KYB dashboard, as printed there (it is sent as the raw Authorization header, without "Bearer").`;
  if (code === 'forbidden' || status === 403)
    return `the API key in ${API_KEY_ENV} is not allowed this call: check that it is the key of the merchant that owns the request.`;
  if (code === 'request_not_found')
    return 'no request with this id for this API key: give the request id (the stream_id of its events, e.g. dr_… or sr_…).';
  if (code === 'network_error' || code === 'timeout')
    return `is ${BASE_URL_ENV} (or --base-url) the KYB API's {base_url}, and reachable from here?`;
  if (code === 'rate_limited' || code === 'service_unavailable' || (status !== null && status >= 500))
    return 'the service is busy or down (the client already retried): run the command again later.';
  if (status !== null && status >= 300 && status < 400)
    return `redirects are not followed: set ${BASE_URL_ENV} (or --base-url) to the address the API answers on.`;
  if (code === 'invalid_response' || code === 'too_many_pages')
    return `the answer is not one the client can read: check that ${BASE_URL_ENV} is the KYB API's {base_url}.`;
  if (code === 'attestation_rejected')
    return 'the release did not verify: check --issuer/KYB_ATTESTATION_ISSUER and --audience/KYB_AUDIENCE (your receiver uses the same values); if they are right, do not trust this release.';
  if (code === 'jwks_unavailable')
    return 'the KYB JWKS could not be fetched: check --jwks-url/KYB_JWKS_URL (default {base_url}/.well-known/kyb-jwks.json).';
  return '';
}

/**
 * A message with every occurrence of `secret` replaced, so no layer can print it.
 *
 * @example
 * ```ts
 * redact('key kyb_live_1 refused', 'kyb_live_1') // 'key [KYB_API_KEY] refused'
 * ```
 */
export function redact(message: string, secret: string): string {
  return secret.length < 4 ? message : message.split(secret).join(`[${API_KEY_ENV}]`);
}

/**
 * Runs one API step of a command, turning a KYB API failure into the CLI's error (see {@link apiFailure}).
 *
 * @example
 * ```ts
 * const log = await callApi(settings, () => client.deliveries(requestId))
 * ```
 */
export async function callApi<T>(settings: ApiSettings, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw apiFailure(error, settings);
  }
}

/**
 * A terminal-safe rendering of a value from the API for a table cell: strings as they are without control
 * characters (no escape sequence reaches the terminal), anything else as JSON.
 *
 * @example
 * ```ts
 * cellText('Acme\x1b[2J') // 'Acme\\u001b[2J'
 * cellText({ a: 1 }) // '{"a":1}'
 * ```
 */
export function cellText(value: unknown): string {
  const text = typeof value === 'string' ? value : value === undefined ? '—' : (JSON.stringify(value) ?? String(value));
  return text.replace(
    // eslint-disable-next-line no-control-regex
    /[\u0000-\u001f\u007f-\u009f]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * A Unix time in seconds (or milliseconds, or an ISO string) as an ISO timestamp, for tables; '—' when unreadable.
 *
 * @example
 * ```ts
 * isoTime(1767225600) // '2026-01-01T00:00:00.000Z'
 * ```
 */
export function isoTime(value: unknown): string {
  const ms = timeMs(value);
  return ms === undefined ? '—' : new Date(ms).toISOString();
}

/**
 * A time from the API in Unix milliseconds: a number of seconds (below 10^11) or milliseconds, or a date string.
 *
 * @example
 * ```ts
 * timeMs('2026-01-01T00:00:00Z') // 1767225600000
 * ```
 */
export function timeMs(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value) && value > 0) return value < 1e11 ? value * 1000 : value;
  if (typeof value === 'string' && value !== '') {
    if (/^\d{1,15}$/.test(value)) return timeMs(Number(value));
    const parsed = Date.parse(value);
    return Number.isNaN(parsed) ? undefined : parsed;
  }
  return undefined;
}

/** Whether a `config_invalid` message has a problem about `option`: "owner: `option` …", or a listed "- `option` …". */
function refusesOption(message: string, option: string): boolean {
  return message.includes(`: \`${option}\``) || message.includes(`- \`${option}\``);
}
