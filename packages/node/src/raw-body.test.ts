import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { nodeBodySource } from './raw-body.js';

function request(headers: Record<string, string>): IncomingMessage {
  const req = new IncomingMessage(new Socket());
  req.headers = headers;
  return req;
}

const json = { 'content-type': 'application/json' };

/** As a body parser leaves the request: every byte read. */
function consumed(req: IncomingMessage): IncomingMessage {
  req.push('{"a":1}');
  req.push(null);
  req.read();
  return req;
}

describe('nodeBodySource: one decision for every Node entry point', () => {
  it('takes a Buffer a layer already read as the exact bytes', () => {
    const bytes = Buffer.from('{"a":1}');
    expect(nodeBodySource(request(json), bytes)).toEqual({ kind: 'bytes', bytes });
  });

  it('reads an untouched request stream, with its declared length', () => {
    const req = request({ ...json, 'content-length': '7' });
    expect(nodeBodySource(req, undefined)).toEqual({ kind: 'stream', stream: req, declaredLength: '7' });
  });

  it('reads the stream when a parser skipped it and left an empty object (express 4 json() on another type)', () => {
    const req = request(json);
    expect(nodeBodySource(req, {})).toMatchObject({ kind: 'stream' });
  });

  it('refuses a stream a parser consumed and marked (body-parser sets _body)', () => {
    const req = request(json) as IncomingMessage & { _body?: boolean };
    req._body = true;
    expect(nodeBodySource(req, { parsed: true })).toEqual({ kind: 'parsed' });
  });

  it('refuses a stream something already read from', async () => {
    const req = consumed(request(json));
    expect(nodeBodySource(req, undefined)).toEqual({ kind: 'parsed' });
  });

  it.each<[string, Record<string, string>, string]>([
    [
      'declared UTF-8 with a matching length',
      { ...json, 'content-length': String(Buffer.byteLength('{"n":"Zoë"}')) },
      '{"n":"Zoë"}',
    ],
    ['without a charset', { 'content-type': 'application/json', 'content-length': '7' }, '{"a":1}'],
  ])('takes kept text that provably re-encodes to the signed bytes: %s', (_name, headers, text) => {
    const req = consumed(request(headers));
    expect(nodeBodySource(req, text)).toEqual({ kind: 'bytes', bytes: text });
  });

  it.each<[string, Record<string, string>, string]>([
    ['a length that does not match', { ...json, 'content-length': '8' }, '{"a":1}'],
    ['no Content-Length (chunked)', json, '{"a":1}'],
    ['another charset', { 'content-type': 'application/json; charset=iso-8859-1', 'content-length': '7' }, '{"a":1}'],
    ['gzip', { ...json, 'content-encoding': 'gzip', 'content-length': '7' }, '{"a":1}'],
    ['a replacement character', { ...json, 'content-length': '9' }, '{"a":"\uFFFD"}'.slice(0, 9)],
  ])('refuses kept text that may not be the signed bytes: %s', (_name, headers, text) => {
    const req = consumed(request(headers));
    expect(nodeBodySource(req, text)).toEqual({ kind: 'parsed' });
  });
});
