/**
 * One HTTP server of the bench, run as a child process by the HTTP section:
 *   node --import tsx bench/src/http/server.ts <framework> <variant>   (imports the built packages)
 * Configuration (secrets, JWKS, issuer, audience, path) comes in `KYB_BENCH_SERVER`, the clock in
 * `KYB_BENCH_NOW_MS`. It listens on a free 127.0.0.1 port, reports it over IPC, answers `cpu` messages with its
 * process.cpuUsage(), and exits when the parent disconnects.
 */
import { apps } from './apps/index.js';
import type { Endpoint } from './apps/types.js';
import { createHandwrittenReceiver } from './baseline.js';
import {
  FRAMEWORKS,
  STRIPE_HEADER,
  variantsOf,
  type Framework,
  type ParentMessage,
  type ServerConfig,
  type ServerMessage,
  type Variant,
} from './protocol.js';

const send = (message: ServerMessage): void => {
  process.send?.(message);
};

// Each server loads only what its endpoint uses (the core, Stripe), so starting the many processes stays cheap.
async function endpointFor(variant: Variant, config: ServerConfig, secrets: Record<string, string>): Promise<Endpoint> {
  switch (variant) {
    case 'handwritten':
    case 'handwritten-attested':
    case 'handwritten-verify':
      return {
        kind: 'manual',
        header: 'service-kyb-signature',
        answer: createHandwrittenReceiver(secrets, {
          keyPerRequest: variant !== 'handwritten',
          ...(variant === 'handwritten-verify' ? { verifyTokensOf: config.jwks } : {}),
        }),
        peer: false,
      };
    case 'stripe': {
      const { createStripeReceiver } = await import('./peer.js');
      return { kind: 'manual', header: STRIPE_HEADER, answer: createStripeReceiver(config.peerSecret), peer: true };
    }
    case 'adapter':
      // HMAC-only events arrive fresh on every request, so this server runs the receiver exactly as a user creates it.
      return { kind: 'adapter', receiver: (await import('../receiver.js')).createBenchReceiver(config) };
    case 'adapter-attested': {
      // Attested events come from a pre-signed pool (an RS256 signature per request would swamp the load generator).
      const [{ createBenchReceiver }, { perRequestKeyStore }] = await Promise.all([
        import('../receiver.js'),
        import('./adapter-store.js'),
      ]);
      return { kind: 'adapter', receiver: createBenchReceiver(config, perRequestKeyStore()) };
    }
  }
}

async function main(): Promise<void> {
  const [framework, variant] = process.argv.slice(2) as [Framework, Variant];
  if (!FRAMEWORKS.includes(framework) || !variantsOf(framework).includes(variant)) {
    throw new Error(
      `usage: server.ts <${FRAMEWORKS.join('|')}> <${variantsOf('express').join('|')}> (stripe: express, fastify)`,
    );
  }
  const raw = process.env['KYB_BENCH_SERVER'];
  if (!raw) throw new Error('KYB_BENCH_SERVER is not set; the HTTP section starts this process');
  const config = JSON.parse(raw) as ServerConfig;
  const secrets = Object.fromEntries(
    Object.entries(config.secrets).map(([version, secret]) => [version, String(secret)]),
  );
  const start = await apps[framework]();
  const port = await start({ path: config.path, endpoint: await endpointFor(variant, config, secrets) });
  process.on('message', (message: ParentMessage) => {
    if (message.type === 'cpu') send({ type: 'cpu', id: message.id, ...process.cpuUsage() });
  });
  process.on('disconnect', () => process.exit(0));
  send({ type: 'ready', port });
}

main().catch((error: unknown) => {
  send({ type: 'error', message: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
  process.exitCode = 1;
  process.disconnect?.();
});
