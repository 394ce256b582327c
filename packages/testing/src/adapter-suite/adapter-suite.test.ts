import { createServer } from 'node:http';
import type { Receiver } from '@kyb-webhooks/core';
import { readBodyStream } from '@kyb-webhooks/core/adapter';
import { runAdapterConformance, serveOnLoopback, type AdapterTestOptions } from './index.js';

// The suite checks itself against the smallest possible adapter, plain node:http, so a failure in a framework's
// run points at that framework's adapter rather than at the suite.
function startNodeApp(receiver: Receiver, options: AdapterTestOptions = {}, parseJsonFirst = false) {
  const server = createServer(async (req, res) => {
    const read = await readBodyStream(req, {
      maxBytes: receiver.maxBodyBytes,
      declaredLength: req.headers['content-length'],
    });
    const result = !read.ok
      ? receiver.reject(read.code)
      : parseJsonFirst
        ? receiver.reject('body_already_parsed') // what an adapter must do when all it gets is a parsed object
        : await receiver.receive({ method: req.method, headers: req.headers, body: read.body });
    try {
      // An adapter's hook sees every result and changes none of them, whatever it throws or rejects with.
      void Promise.resolve(options.onResult?.(result)).catch(() => {});
    } catch {
      // ignored, as every adapter does
    }
    res
      .writeHead(result.status, { ...result.headers, 'content-type': 'application/json; charset=utf-8' })
      .end(JSON.stringify(result.body));
  });
  return serveOnLoopback(server);
}

runAdapterConformance('node:http reference adapter', (receiver, options) => startNodeApp(receiver, options), {
  startAppWithBodyParser: (receiver) => startNodeApp(receiver, {}, true),
});
