// The test kit's JWKS server (packages/testing/src/jwks-server.ts) for the workerd run. A worker cannot listen on a
// port, so the "server" is a stub behind the global fetch: requests to its origin are answered in the isolate with the
// same behaviour (path, methods, request count, status, key rotation); every other URL goes to the real fetch. The
// receiver still fetches its keys through the global fetch and parses a real Response.

export const KYB_JWKS_PATH = '/.well-known/kyb-jwks.json';

const servers = new Map();
let nextPort = 40000;
let installed = false;

function install() {
  if (installed) return;
  installed = true;
  const realFetch = globalThis.fetch;
  globalThis.fetch = async (input, init) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    const server = servers.get(url.origin);
    if (!server) return realFetch(input, init);
    return server.answer(request, url);
  };
}

export async function startJwksServer(jwks) {
  install();
  let source = jwks;
  let status = 200;
  let requests = 0;
  const origin = `http://127.0.0.1:${nextPort++}`;
  const json = (code, payload) =>
    new Response(JSON.stringify(payload), { status: code, headers: { 'content-type': 'application/json' } });
  servers.set(origin, {
    answer(request, url) {
      if (url.pathname !== KYB_JWKS_PATH) return json(404, { error: 'not_found' });
      if (request.method !== 'GET' && request.method !== 'HEAD') return json(405, { error: 'method_not_allowed' });
      requests += 1;
      if (status !== 200) return json(status, { error: 'unavailable' });
      return json(200, typeof source === 'function' ? source() : source);
    },
  });
  return {
    url: `${origin}${KYB_JWKS_PATH}`,
    origin,
    get requests() {
      return requests;
    },
    setJwks(next) {
      source = next;
    },
    setStatus(next) {
      status = next;
    },
    async close() {
      // A closed server refuses connections, as the real one does.
      servers.set(origin, {
        answer() {
          throw new TypeError('fetch failed: connection refused');
        },
      });
    },
  };
}
