import { generateKeyPairSync, randomUUID, type JsonWebKey } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { KYB_JWKS_PATH, TEST_ISSUER, randomSecret } from '@kyb-webhooks/testing';
import { CliError, EXIT, usageError } from './errors.js';

/**
 * Where the development keys live unless `--keys` says otherwise: a dot-directory of the current directory, so the
 * dev server started from a project and the CLI run from it agree.
 *
 * @example
 * ```ts
 * loadOrCreateDevKeys(DEFAULT_KEYS_FILE) // ./.kyb-webhooks/dev-keys.json
 * ```
 */
export const DEFAULT_KEYS_FILE = join('.kyb-webhooks', 'dev-keys.json');

/**
 * The port the JWKS is served on unless the keys file was created with another one; fixed so `KYB_JWKS_URL` stays
 * the same across restarts.
 *
 * @example
 * ```ts
 * `http://127.0.0.1:${DEFAULT_JWKS_PORT}/.well-known/kyb-jwks.json`
 * ```
 */
export const DEFAULT_JWKS_PORT = 4479;

/**
 * The development identity of the KYB service the CLI plays: an RS256 attestation key, two HMAC secret versions
 * (the older one is what the secret-rotation scenario rotates away from), issuer, audience and the JWKS port.
 *
 * @example
 * ```ts
 * const { keys } = loadOrCreateDevKeys('.kyb-webhooks/dev-keys.json')
 * keys.secrets[keys.currentVersion] // what `send` signs with by default
 * ```
 */
export interface DevKeys {
  version: 1;
  kid: string;
  issuer: string;
  audience: string;
  /** PKCS#8 PEM of the attestation key's private half. */
  privateKeyPem: string;
  /** The public half as published in the JWKS (kid, alg RS256, use sig). */
  publicJwk: JsonWebKey & { kid: string; alg: 'RS256'; use: 'sig' };
  /** HMAC secrets by `kv` version. */
  secrets: Record<string, string>;
  /** The version `send` and `scenario` sign with unless told otherwise. */
  currentVersion: string;
  /** The version the secret-rotation scenario treats as the old one. */
  previousVersion: string;
  jwksPort: number;
}

/**
 * The keys and where they came from.
 *
 * @example
 * ```ts
 * const { keys, file, created } = loadOrCreateDevKeys(options.keys)
 * if (created) process.stderr.write(`created ${file}\n`)
 * ```
 */
export interface LoadedDevKeys {
  keys: DevKeys;
  /** Absolute path of the keys file. */
  file: string;
  /** True when this call created the file. */
  created: boolean;
}

/**
 * The JWKS URL the dev server must be given (`KYB_JWKS_URL`).
 *
 * @example
 * ```ts
 * jwksUrl(keys) // 'http://127.0.0.1:4479/.well-known/kyb-jwks.json'
 * ```
 */
export function jwksUrl(keys: Pick<DevKeys, 'jwksPort'>, port: number = keys.jwksPort): string {
  return `http://127.0.0.1:${port}${KYB_JWKS_PATH}`;
}

/**
 * Reads the keys file, or creates it (mode 0600, in a directory with its own `.gitignore`) when it does not exist.
 * Creation is exclusive, so two commands started at once agree on one set of keys.
 *
 * @example
 * ```ts
 * const { keys } = loadOrCreateDevKeys('.kyb-webhooks/dev-keys.json', { jwksPort: 4479 })
 * ```
 */
export function loadOrCreateDevKeys(file: string = DEFAULT_KEYS_FILE, create: { jwksPort?: number } = {}): LoadedDevKeys {
  const path = resolve(file);
  const existing = readKeys(path);
  if (existing) return { keys: existing, file: path, created: false };
  const keys = generateDevKeys(create.jwksPort ?? DEFAULT_JWKS_PORT);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  // A directory we own gets a .gitignore, so the keys are never committed by accident.
  if (dirname(path).endsWith('.kyb-webhooks')) writeIfMissing(join(dirname(path), '.gitignore'), '*\n', 0o644);
  try {
    writeFileSync(path, `${JSON.stringify(keys, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      const winner = readKeys(path);
      if (winner) return { keys: winner, file: path, created: false };
    }
    throw new CliError(`Could not create the keys file ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'}): check that its directory is writable, or pass --keys <file>.`);
  }
  chmodSync(path, 0o600); // the umask may have narrowed it further, never widened it; make it exact
  return { keys, file: path, created: true };
}

function generateDevKeys(jwksPort: number): DevKeys {
  if (!Number.isInteger(jwksPort) || jwksPort < 1 || jwksPort > 65535) {
    throw usageError(`--jwks-port must be a port number between 1 and 65535, e.g. --jwks-port ${DEFAULT_JWKS_PORT}.`);
  }
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const kid = `kyb-dev-${randomUUID().slice(0, 8)}`;
  return {
    version: 1,
    kid,
    issuer: TEST_ISSUER,
    audience: randomUUID(),
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicJwk: { ...publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' },
    secrets: { '1': randomSecret(), '2': randomSecret() },
    currentVersion: '2',
    previousVersion: '1',
    jwksPort,
  };
}

function readKeys(path: string): DevKeys | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CliError(`Could not read the keys file ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'}): check its permissions, or pass --keys <file>.`);
  }
  warnIfReadableByOthers(path);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw broken(path, 'it is not valid JSON');
  }
  const problem = describeProblem(parsed);
  if (problem) throw broken(path, problem);
  return parsed as DevKeys;
}

// Says what is wrong without quoting the file: it holds secrets.
function describeProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return 'it is not a JSON object';
  const keys = value as Partial<Record<keyof DevKeys, unknown>>;
  if (keys.version !== 1) return 'its "version" is not 1';
  for (const field of ['kid', 'issuer', 'audience', 'privateKeyPem', 'currentVersion', 'previousVersion'] as const) {
    if (typeof keys[field] !== 'string' || keys[field] === '') return `"${field}" is missing`;
  }
  if (typeof keys.publicJwk !== 'object' || keys.publicJwk === null) return '"publicJwk" is missing';
  if (typeof keys.secrets !== 'object' || keys.secrets === null) return '"secrets" is missing';
  const secrets = keys.secrets as Record<string, unknown>;
  for (const version of [keys.currentVersion, keys.previousVersion] as string[]) {
    if (typeof secrets[version] !== 'string' || secrets[version] === '') return `"secrets" has no version "${version}"`;
  }
  if (!Number.isInteger(keys.jwksPort)) return '"jwksPort" is not an integer';
  return undefined;
}

function broken(path: string, problem: string): CliError {
  return new CliError(
    `The keys file ${path} cannot be used: ${problem}. Delete it to create new development keys (then paste the output of \`kyb-webhooks keys\` into your dev server's environment again), or pass --keys <file>.`,
    EXIT.usage,
  );
}

function warnIfReadableByOthers(path: string): void {
  try {
    if ((statSync(path).mode & 0o077) !== 0) {
      process.stderr.write(`warning: ${path} is readable by other users; run: chmod 600 ${path}\n`);
    }
  } catch {}
}

function writeIfMissing(path: string, text: string, mode: number): void {
  try {
    writeFileSync(path, text, { mode, flag: 'wx' });
  } catch {}
}
