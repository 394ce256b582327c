import { spawnSync } from 'node:child_process';
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomUUID, type JsonWebKey } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
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
 * Creation is exclusive, so two commands started at once agree on one set of keys. Only `keys`, `send` and
 * `scenario` create keys (and say so); commands that check or re-sign with existing keys use {@link loadDevKeys}.
 *
 * @example
 * ```ts
 * const { keys } = loadOrCreateDevKeys('.kyb-webhooks/dev-keys.json', { jwksPort: 4479 })
 * ```
 */
export function loadOrCreateDevKeys(
  file: string = DEFAULT_KEYS_FILE,
  create: { jwksPort?: number } = {},
): LoadedDevKeys {
  const path = resolve(file);
  const existing = readKeys(path);
  if (existing) return loaded(existing, path, false);
  const keys = generateDevKeys(create.jwksPort ?? DEFAULT_JWKS_PORT);
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  } catch (error) {
    throw usageError(
      `Could not create the directory of the keys file ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'}): pass --keys <file> in a directory you can write.`,
    );
  }
  // A directory we own gets a .gitignore, so the keys are never committed by accident.
  if (basename(dirname(path)) === '.kyb-webhooks') writeIfMissing(join(dirname(path), '.gitignore'), '*\n', 0o644);
  try {
    writeFileSync(path, `${JSON.stringify(keys, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      const winner = readKeys(path);
      if (winner) return loaded(winner, path, false);
    }
    throw usageError(
      `Could not create the keys file ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'}): check that its directory is writable, or pass --keys <file>.`,
    );
  }
  chmodSync(path, 0o600); // the umask may have narrowed it further, never widened it; make it exact
  return loaded(keys, path, true);
}

/**
 * Reads an existing keys file; a missing one is a usage error. Commands that verify or re-sign with the keys a dev
 * server was given must not invent new ones: the server would reject everything and the CLI would blame it.
 *
 * @example
 * ```ts
 * const { keys } = loadDevKeys(options.keys) // throws "no development keys at …: run `kyb-webhooks keys` first…"
 * ```
 */
export function loadDevKeys(file: string = DEFAULT_KEYS_FILE): LoadedDevKeys {
  const found = findDevKeys(file);
  if (found) return found;
  const path = resolve(file);
  const keysCommand = file === DEFAULT_KEYS_FILE ? 'kyb-webhooks keys' : `kyb-webhooks keys --keys ${file}`;
  throw usageError(
    `no development keys at ${path}: run \`${keysCommand}\` first (and give your dev server its output), or pass --keys <file>.`,
  );
}

/**
 * Reads the keys file when it exists, without creating it: for commands that can do without keys.
 *
 * @example
 * ```ts
 * const found = findDevKeys(options.keys) // undefined when there is no keys file
 * ```
 */
export function findDevKeys(file: string = DEFAULT_KEYS_FILE): LoadedDevKeys | undefined {
  const path = resolve(file);
  const existing = readKeys(path);
  return existing ? loaded(existing, path, false) : undefined;
}

function loaded(keys: DevKeys, file: string, created: boolean): LoadedDevKeys {
  warnIfNotIgnoredByGit(file);
  return { keys, file, created };
}

/**
 * Fresh development keys that are never written: for a command that must post something but has no keys file and
 * needs none (`replay` without `--resign`, whose headers and body are the capture's own).
 *
 * @example
 * ```ts
 * const keys = findDevKeys(options.keys)?.keys ?? unsavedDevKeys()
 * ```
 */
export function unsavedDevKeys(): DevKeys {
  return generateDevKeys(DEFAULT_JWKS_PORT);
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
    throw usageError(
      `Could not read the keys file ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'}): check that it is a file you can read, or pass --keys <file>.`,
    );
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

const VERSION = /^[A-Za-z0-9._-]{1,64}$/; // the kv grammar of the Service-KYB-Signature header

// Says what is wrong without quoting the file: it holds secrets.
function describeProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'it is not a JSON object';
  const keys = value as Partial<Record<keyof DevKeys, unknown>>;
  if (keys.version !== 1) return 'its "version" is not 1';
  for (const field of ['kid', 'issuer', 'audience', 'privateKeyPem', 'currentVersion', 'previousVersion'] as const) {
    if (typeof keys[field] !== 'string' || keys[field] === '') return `"${field}" is missing`;
  }
  if (typeof keys.publicJwk !== 'object' || keys.publicJwk === null) return '"publicJwk" is missing';
  if (typeof keys.secrets !== 'object' || keys.secrets === null || Array.isArray(keys.secrets))
    return '"secrets" is missing';
  for (const [version, secret] of Object.entries(keys.secrets as Record<string, unknown>)) {
    if (!VERSION.test(version)) return `"secrets" has a version name that is not a kv (letters, digits, ".", "_", "-")`;
    if (typeof secret !== 'string' || secret === '') return `"secrets" version "${version}" is not a non-empty string`;
  }
  const secrets = keys.secrets as Record<string, unknown>;
  for (const version of [keys.currentVersion, keys.previousVersion] as string[]) {
    if (secrets[version] === undefined) return `"secrets" has no version "${version}"`;
  }
  if (!Number.isInteger(keys.jwksPort) || (keys.jwksPort as number) < 1 || (keys.jwksPort as number) > 65535)
    return '"jwksPort" is not a port number from 1 to 65535';
  return describeKeyProblem(
    keys.privateKeyPem as string,
    keys.publicJwk as Record<string, unknown>,
    keys.kid as string,
  );
}

// The JWKS the CLI serves is the file's publicJwk and attestations are signed with its PEM: if the two halves are not
// one key pair, every attestation fails at the dev server and the CLI would blame the server.
function describeKeyProblem(pem: string, publicJwk: Record<string, unknown>, kid: string): string | undefined {
  let derived: JsonWebKey;
  try {
    const privateKey = createPrivateKey(pem);
    if (privateKey.asymmetricKeyType !== 'rsa') return '"privateKeyPem" is not an RSA key';
    derived = createPublicKey(privateKey).export({ format: 'jwk' });
  } catch {
    return '"privateKeyPem" is not a PEM private key';
  }
  if (publicJwk.kty !== 'RSA' || publicJwk.n !== derived.n || publicJwk.e !== derived.e)
    return '"publicJwk" is not the public half of "privateKeyPem"';
  if (publicJwk.kid !== kid) return '"publicJwk" does not carry the file\u2019s "kid"';
  if (publicJwk.alg !== 'RS256' || publicJwk.use !== 'sig') return '"publicJwk" is not marked alg RS256, use sig';
  if ('d' in publicJwk) return '"publicJwk" holds a private key part';
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

/**
 * Warns when a keys file inside a git work tree is not ignored, naming the line to add: only a `.kyb-webhooks`
 * directory gets a `.gitignore` of its own, and `--keys` can put the file anywhere. Silent without git, outside a
 * work tree, or when git cannot tell.
 */
function warnIfNotIgnoredByGit(path: string): void {
  let directory: string;
  try {
    directory = realpathSync(dirname(path));
  } catch {
    return;
  }
  // No fsmonitor: a repository's own config could otherwise make this read-only check run a program of its choosing.
  const git = (args: string[]) =>
    spawnSync('git', ['-c', 'core.fsmonitor=', ...args], {
      cwd: directory,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 5000,
    });
  const ignored = git(['check-ignore', '-q', '--', basename(path)]);
  // 0: ignored, 1: not ignored, 128 (or an error such as ENOENT for a missing git): not a work tree or cannot tell.
  if (ignored.error !== undefined || ignored.status !== 1) return;
  const top = git(['rev-parse', '--show-toplevel']);
  if (top.error !== undefined || top.status !== 0) return;
  const line = `/${relative(top.stdout.trim(), join(directory, basename(path)))
    .split(sep)
    .join('/')}`;
  process.stderr.write(
    `warning: ${path} holds development secrets and git does not ignore it: add the line ${line} to ${join(top.stdout.trim(), '.gitignore')}.\n`,
  );
}

function writeIfMissing(path: string, text: string, mode: number): void {
  try {
    writeFileSync(path, text, { mode, flag: 'wx' });
  } catch {}
}
