import { createServer } from 'node:http';
import { readBodyStream, type Receiver } from '@kyb-webhooks/core';
import { runAdapterConformance, serveOnLoopback } from './index.js';

// The suite checks itself against the smallest possible adapter, plain node:http, so a failure in a framework's
// run points at that framework's adapter rather than at the suite.
function startNodeApp(receiver: Receiver, parseJsonFirst = false) {
  const server = createServer(async (req, res) => {
    const read = await readBodyStream(req, { maxBytes: receiver.maxBodyBytes, declaredLength: req.headers['content-length'] });
    const result = !read.ok
      ? receiver.reject(read.code)
      : parseJsonFirst
        ? receiver.reject('body_already_parsed') // what an adapter must do when all it gets is a parsed object
        : await receiver.receive({ method: req.method, headers: req.headers, body: read.body });
    res.writeHead(result.status, { ...result.headers, 'content-type': 'application/json' }).end(JSON.stringify(result.body));
  });
  return serveOnLoopback(server);
}

runAdapterConformance('node:http reference adapter', (receiver) => startNodeApp(receiver), {
  startAppWithBodyParser: (receiver) => startNodeApp(receiver, true),
});
