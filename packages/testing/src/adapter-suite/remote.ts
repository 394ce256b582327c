/**
 * The adapter conformance suite against an app served by another runtime (Bun.serve, Deno.serve, workerd): the cases
 * run in vitest on Node and send real HTTP; the app in the other runtime builds each receiver the suite asks for and
 * answers a small control API with its handler log. Both halves are runtime-neutral (fetch, Request, Response).
 *
 *   POST   /__control/receivers            {options, bodyParser, onResult}  → {id, path}   a receiver and its app
 *   GET    /__control/receivers/<id>/log                          → HandlerLog
 *   POST   /__control/receivers/<id>/plans {eventId, plan}        → 204
 *   *      /r/<id>/…                                              → the app mounted for receiver <id>
 *
 * The control API builds receivers from JSON options only (secrets, attestation with a jwksUrl, limits): it is a test
 * fixture, to be served on 127.0.0.1 in a test run and nowhere else.
 */
import type { ReceiveResult, ReceiverOptions } from '@kyb-webhooks/core';
import { createHarness, type Harness, type HandlerLog, type HandlerPlan } from './harness.js';

/**
 * A request handler in the Web-standard shape every runtime serves (`Bun.serve`, `Deno.serve`, a Worker's fetch).
 *
 * @example
 * ```ts
 * const handler: FetchHandler = (request) => new Response('ok')
 * ```
 */
export type FetchHandler = (request: Request) => Response | Promise<Response>;

/**
 * How the framework under test mounts a receiver at `path`: the documented way, or (`bodyParser: true`) behind a
 * JSON body parser that keeps no exact bytes, for the `body_already_parsed` case. When `onResult` is given, the
 * adapter must be created with it as its `onResult` option.
 *
 * @example
 * ```ts
 * const mount: MountAdapter = (receiver, path, { bodyParser }) =>
 *   (bodyParser ? new Hono().use(path, async (c, next) => { await c.req.json(); await next() }) : new Hono())
 *     .post(path, kybWebhooks(receiver)).fetch
 * ```
 */
export type MountAdapter = (
  receiver: ReturnType<typeof createHarness>['receiver'],
  path: string,
  options: { bodyParser: boolean; onResult?: ((result: ReceiveResult) => unknown) | undefined },
) => FetchHandler;

/**
 * The app half, for the other runtime: a fetch handler serving the control API and the apps it mounts.
 *
 * @example
 * ```ts
 * // bun.ts
 * Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: createRemoteAdapterApp(mount) })
 * ```
 */
export function createRemoteAdapterApp(mount: MountAdapter): FetchHandler {
  const apps = new Map<string, { fetch: FetchHandler; log: HandlerLog; plans: Map<string, HandlerPlan> }>();
  let next = 0;
  const json = (payload: unknown, status = 200) =>
    new Response(JSON.stringify(payload), { status, headers: { 'content-type': 'application/json' } });

  return async (request) => {
    const { pathname } = new URL(request.url);
    const mounted = /^\/r\/(\d+)\//.exec(pathname);
    if (mounted) {
      const app = apps.get(mounted[1]!);
      return app ? app.fetch(request) : json({ error: 'no such receiver' }, 404);
    }
    if (pathname === '/__control/receivers' && request.method === 'POST') {
      const {
        options,
        bodyParser = false,
        onResult = false,
      } = (await request.json()) as { options: ReceiverOptions; bodyParser?: boolean; onResult?: boolean };
      const id = String((next += 1));
      const path = `/r/${id}/webhooks/kyb`;
      const harness = createHarness(options);
      const { receiver, log, plans } = harness;
      apps.set(id, {
        fetch: mount(receiver, path, onResult ? { bodyParser, onResult: harness.onResult } : { bodyParser }),
        log,
        plans,
      });
      return json({ id, path });
    }
    const control = /^\/__control\/receivers\/(\d+)\/(log|plans)$/.exec(pathname);
    const app = control ? apps.get(control[1]!) : undefined;
    if (control && app && control[2] === 'log' && request.method === 'GET') return json(app.log);
    if (control && app && control[2] === 'plans' && request.method === 'POST') {
      const { eventId, plan } = (await request.json()) as { eventId: string; plan: HandlerPlan };
      app.plans.set(eventId, { ...plan });
      return new Response(null, { status: 204 });
    }
    return json({ error: 'unknown control request' }, 404);
  };
}

/**
 * A running app in the other runtime with one receiver mounted, and that receiver's handler record.
 *
 * @example
 * ```ts
 * const { app, harness } = await remote.start(options)
 * ```
 */
export interface RemoteAdapterApp {
  app: { url: string; close(): Promise<void> };
  harness: Harness;
}

/**
 * The Node half: what the conformance suite calls instead of building receivers in-process.
 *
 * @example
 * ```ts
 * const remote = connectRemoteAdapterApp('http://127.0.0.1:8787')
 * const { app, harness } = await remote.start({ secrets: { '1': 'whsec_…' } })
 * ```
 */
export interface RemoteAdapterApps {
  /** The origin of the app in the other runtime. */
  origin: string;
  start(options: ReceiverOptions, variant?: { bodyParser?: boolean; onResult?: boolean }): Promise<RemoteAdapterApp>;
}

/**
 * Connects to an app served by {@link createRemoteAdapterApp} at `origin`.
 *
 * @example
 * ```ts
 * runAdapterConformance('hono on Bun.serve', connectRemoteAdapterApp(process.env.KYB_REMOTE_ORIGIN!), { mountedOn: 'post-only' })
 * ```
 */
export function connectRemoteAdapterApp(origin: string): RemoteAdapterApps {
  async function call(path: string, init?: RequestInit): Promise<Response> {
    const response = await fetch(`${origin}${path}`, init);
    if (!response.ok)
      throw new Error(
        `the remote app answered ${response.status} to ${init?.method ?? 'GET'} ${path}: is it serving createRemoteAdapterApp?`,
      );
    return response;
  }
  return {
    origin,
    async start(options, variant = {}) {
      const created = await call('/__control/receivers', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ options, bodyParser: variant.bodyParser ?? false, onResult: variant.onResult ?? false }),
      });
      const { id, path } = (await created.json()) as { id: string; path: string };
      const log = async () => (await (await call(`/__control/receivers/${id}/log`)).json()) as HandlerLog;
      return {
        // The runtime's server outlives the suite; its runner stops it.
        app: { url: `${origin}${path}`, close: async () => {} },
        harness: {
          calls: async () => (await log()).calls,
          callsFor: async (eventId) => (await log()).calls.filter((entry) => entry.eventId === eventId),
          unknownCalls: async () => (await log()).unknownCalls,
          answersFor: async (eventId) => (await log()).answers[eventId],
          results: async () => (await log()).results,
          plan: async (eventId, plan) => {
            await call(`/__control/receivers/${id}/plans`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ eventId, plan }),
            });
          },
        },
      };
    },
  };
}
