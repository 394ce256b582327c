import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { readRawBody } from '../raw-body.js';
import { header, OK_BODY, UNAUTHORIZED_BODY, type StartApp } from './types.js';

export const start: StartApp = async ({ variant, path, checkHmac, receiver }) => {
  const app = express();
  if (variant === 'adapter' || variant === 'adapter-attested') {
    const { kybWebhooks } = await import('@kyb-webhooks/express');
    app.post(path, kybWebhooks(receiver()));
  } else {
    app.post(path, (req, res, next) => {
      readRawBody(req).then((body) => {
        if (variant === 'hmac' && !checkHmac(header(req.headers['service-kyb-signature']), body)) {
          res.status(401).json(UNAUTHORIZED_BODY);
          return;
        }
        res.status(200).json(OK_BODY);
      }, next);
    });
  }
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
};
