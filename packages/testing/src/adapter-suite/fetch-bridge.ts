/**
 * A tiny `node:http` → `Request` / `Response` → `node:http` bridge, so the conformance suite can drive a fetch-style
 * handler (`(request: Request) => Promise<Response>`) over real HTTP on Node, as Bun.serve or Deno.serve would serve it.
 */
import { createServer, type IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { serveOnLoopback, type AdapterApp } from './index.js';

/**
 * Serves a fetch-style handler on 127.0.0.1 at a free port through a minimal bridge: the request body is the Node
 * request stream as a Web `ReadableStream` (nothing buffered ahead of the handler), the answer is written as it is.
 * Any path reaches the handler; `path` only makes the returned URL.
 *
 * @example
 * ```ts
 * runAdapterConformance('createFetchHandler on node:http', (receiver, options) =>
 *   serveFetchOnLoopback(createFetchHandler(receiver, options)))
 * ```
 */
export function serveFetchOnLoopback(
  handler: (request: Request) => Response | Promise<Response>,
  path = '/webhooks/kyb',
): Promise<AdapterApp> {
  const server = createServer((req, res) => {
    void (async () => {
      const response = await handler(toRequest(req));
      const headers: string[] = [];
      response.headers.forEach((value, name) => void headers.push(name, value));
      // A body the handler stopped draining at a bound was not read to its end: the server's part is to close the
      // connection once answered instead of reusing it, or Node itself would read the rest without any bound.
      if (!req.complete) headers.push('connection', 'close');
      res.writeHead(response.status, headers);
      res.end(new Uint8Array(await response.arrayBuffer()));
    })().catch(() => {
      // The handler rejected (the sender went away mid-body): nobody is left to answer.
      res.destroy();
    });
  });
  return serveOnLoopback(server, path);
}

function toRequest(req: IncomingMessage): Request {
  const headers = new Headers();
  for (let index = 0; index < req.rawHeaders.length; index += 2)
    headers.append(req.rawHeaders[index]!, req.rawHeaders[index + 1]!);
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  return new Request(`http://${req.headers.host ?? '127.0.0.1'}${req.url ?? '/'}`, {
    method: req.method ?? 'GET',
    headers,
    body: hasBody ? (Readable.toWeb(req) as ReadableStream<Uint8Array>) : null,
    duplex: 'half',
  } as RequestInit);
}
