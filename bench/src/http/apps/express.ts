import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import express, { type Request, type Response } from 'express';
import { readRawBody } from '../raw-body.js';
import { answerBody, BODY_LIMIT_BYTES, header, type StartApp } from './types.js';

export const start: StartApp = async ({ path, endpoint }) => {
  const app = express();
  if (endpoint.kind === 'adapter') {
    const { kybWebhooks } = await import('@kyb-webhooks/express');
    app.post(path, kybWebhooks(endpoint.receiver));
  } else {
    const answer = (req: Request, res: Response, body: Buffer | undefined): void => {
      if (body === undefined) {
        res.status(413).end();
        return;
      }
      const status = endpoint.answer(header(req.headers[endpoint.header]), body);
      if (endpoint.peer) {
        res.status(status).json(answerBody(status));
      } else {
        // Written as our adapter writes its answer (one res.end of a string): res.json() adds an ETag and a
        // Buffer body written apart from the headers, work the baseline should not carry when ours does not.
        res.statusCode = status;
        res.setHeader('content-type', 'application/json; charset=utf-8');
        res.end(JSON.stringify(answerBody(status)));
      }
    };
    if (endpoint.peer) {
      // As Stripe's docs write it: express.raw() on the webhook route (body-parser, with a cap).
      app.post(path, express.raw({ type: 'application/json', limit: BODY_LIMIT_BYTES }), (req, res) => {
        const body: unknown = req.body;
        answer(req, res, Buffer.isBuffer(body) ? body : undefined);
      });
    } else {
      // The hand-written baseline reads the request stream itself, as our adapter does: express.raw() (body-parser:
      // content-type parsing, type-is) would add work to the baseline that ours does not do.
      app.post(path, (req, res, next) => {
        readRawBody(req, BODY_LIMIT_BYTES).then((body) => answer(req, res, body), next);
      });
    }
  }
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
};
