import { createServer } from 'node:http';
import type { Receiver, ReceiveResult } from '@kyb-webhooks/core';
import { discardBodyStream, nodeHeaders, readBodyStream } from '@kyb-webhooks/core/adapter';
import { runAdapterConformance, serveOnLoopback, type AdapterTestOptions } from './index.js';

// The suite checks itself against the smallest possible adapter, plain node:http, so a failure in a framework's
// run points at that framework's adapter rather than at the suite.
function startNodeApp(receiver: Receiver, options: AdapterTestOptions = {}, parseJsonFirst = false) {
  const server = createServer(async (req, res) => {
    const limits = { maxBytes: receiver.maxBodyBytes, declaredLength: req.headers['content-length'] };
    let result: ReceiveResult;
    if (req.method !== 'POST') {
      // The method first, whatever the body: drained within the usual bounds, never kept.
      await discardBodyStream(req, limits);
      result = receiver.reject('method_not_allowed');
    } else {
      const read = await readBodyStream(req, limits);
      result = !read.ok
        ? receiver.reject(read.code)
        : parseJsonFirst
          ? receiver.reject('body_already_parsed') // what an adapter must do when all it gets is a parsed object
          : await receiver.receive({ method: req.method, headers: nodeHeaders(req), body: read.body });
    }
    try {
      // An adapter's hook sees every result and changes none of them, whatever it throws or rejects with.
      void Promise.resolve(options.onResult?.(result)).catch(() => {});
    } catch {
      // ignored, as every adapter does
    }
    const headers: Record<string, string> = { ...result.headers, 'content-type': 'application/json; charset=utf-8' };
    // Answered before the whole body arrived (a drain bound was reached): without closing, Node itself would go on
    // reading the rest after the answer, without any bound.
    if (!req.complete) headers['connection'] = 'close';
    res.writeHead(result.status, headers).end(JSON.stringify(result.body));
  });
  return serveOnLoopback(server);
}

runAdapterConformance('node:http reference adapter', (receiver, options) => startNodeApp(receiver, options), {
  startAppWithBodyParser: (receiver) => startNodeApp(receiver, {}, true),
});
