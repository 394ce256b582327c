import {
  findDevKeys,
  loadDevKeys,
  loadOrCreateDevKeys,
  unsavedDevKeys,
  type DevKeys,
  type LoadedDevKeys,
} from './dev-keys.js';
import { createDevSigner, type DevSigner } from './dev-signer.js';
import { ensureJwksServed } from './jwks-host.js';
import { createPoster, type Post } from './post.js';
import type { SendingOptions } from './options.js';

/**
 * Everything a delivering command needs: the dev keys, a signer bound to them, a poster for `--to`, and the dev
 * JWKS served for as long as the command runs (unless `jwks serve` already serves it).
 *
 * @example
 * ```ts
 * const session = await openSession(options, { needsJwks: true })
 * try { await session.post(await session.signer.sign(envelope)) } finally { await session.close() }
 * ```
 */
export interface Session {
  keys: DevKeys;
  /** Absent when the command ran without a keys file (`keys: 'optional'` and none existed). */
  keysFile?: string;
  signer: DevSigner;
  post: Post;
  /** Where the JWKS was available during the run, and whether this command served it. */
  jwks?: { url: string; started: boolean };
  close(): Promise<void>;
}

/**
 * Where a command's development keys come from: `create` (send, scenario: created and announced when missing),
 * `require` (a missing file is a usage error), `optional` (unsaved keys when there is no file; no JWKS is served then,
 * since a dev server cannot know a key that exists only for this run).
 *
 * @example
 * ```ts
 * const session = await openSession(options, { needsJwks: true, keys: 'require' })
 * ```
 */
export type KeysMode = 'create' | 'require' | 'optional';

/**
 * Opens a {@link Session}. A keys file created by this call is announced on stderr with what to do: the dev server
 * cannot know keys that did not exist when it started.
 *
 * @example
 * ```ts
 * const session = await openSession({ to, keys: '.kyb-webhooks/dev-keys.json', timeout: 10_000 }, { needsJwks: false, keys: 'create' })
 * ```
 */
export async function openSession(
  options: SendingOptions,
  need: { needsJwks: boolean; keys: KeysMode },
): Promise<Session> {
  let found: LoadedDevKeys | undefined;
  if (need.keys === 'create') found = loadOrCreateDevKeys(options.keys);
  else if (need.keys === 'require') found = loadDevKeys(options.keys);
  else found = findDevKeys(options.keys);
  if (found?.created) {
    process.stderr.write(
      `Created development keys in ${found.file}. Your dev server does not know them yet: run \`kyb-webhooks keys\`, paste its output into the server's environment and restart it.\n`,
    );
  }
  const keys = found?.keys ?? unsavedDevKeys();
  const signer = await createDevSigner(keys);
  const post = createPoster(options.to, signer, options.timeout);
  let release = async () => {};
  let jwks: Session['jwks'];
  if (need.needsJwks && found) {
    const served = await ensureJwksServed(signer.jwks, keys.kid, keys.jwksPort);
    release = served.release;
    jwks = { url: served.url, started: served.started };
  }
  return {
    keys,
    ...(found ? { keysFile: found.file } : {}),
    signer,
    post,
    ...(jwks ? { jwks } : {}),
    close: () => release(),
  };
}
