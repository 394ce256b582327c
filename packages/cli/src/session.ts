import { loadOrCreateDevKeys, type DevKeys } from './dev-keys.js';
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
  keysFile: string;
  signer: DevSigner;
  post: Post;
  /** Where the JWKS was available during the run, and whether this command served it. */
  jwks?: { url: string; started: boolean };
  close(): Promise<void>;
}

/**
 * Opens a {@link Session}. A keys file created by this call is announced on stderr with what to do: the dev server
 * cannot know keys that did not exist when it started.
 *
 * @example
 * ```ts
 * const session = await openSession({ to, keys: '.kyb-webhooks/dev-keys.json', timeout: 10_000 }, { needsJwks: false })
 * ```
 */
export async function openSession(options: SendingOptions, need: { needsJwks: boolean }): Promise<Session> {
  const { keys, file, created } = loadOrCreateDevKeys(options.keys);
  if (created) {
    process.stderr.write(
      `Created development keys in ${file}. Your dev server does not know them yet: run \`kyb-webhooks keys\`, paste its output into the server's environment and restart it.\n`,
    );
  }
  const signer = await createDevSigner(keys);
  const post = createPoster(options.to, signer, options.timeout);
  let release = async () => {};
  let jwks: Session['jwks'];
  if (need.needsJwks) {
    const served = await ensureJwksServed(signer.jwks, keys.kid, keys.jwksPort);
    release = served.release;
    jwks = { url: served.url, started: served.started };
  }
  return { keys, keysFile: file, signer, post, ...(jwks ? { jwks } : {}), close: () => release() };
}
