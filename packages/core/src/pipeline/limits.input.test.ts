// How the receiver reads what an adapter hands it: the method, the body in each accepted form, the content type and
// the delivery-attempt header. One case per test; each pins a branch that mutation testing found unguarded.
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestSigner, testEvents, type TestSigner } from '../../test-kit.js';
import { createReceiver } from '../receiver.js';
import { nodeHeaders } from '../http/headers.js';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW, secrets: { '3': 'input-secret-v3' } });
});

function receiver() {
  return createReceiver({ secrets: { '3': 'input-secret-v3' }, now: () => NOW });
}

describe('method', () => {
  it.each<[string, string | undefined, number]>([
    ['no method (the adapter vouches for POST)', undefined, 200],
    ['POST', 'POST', 200],
    ['post in lower case', 'post', 200],
    ['PUT', 'PUT', 405],
    ['GET', 'GET', 405],
  ])('answers %s with %i', async (_case, method, status) => {
    const { headers, body } = await signer.sign(testEvents.dataRequestPendingApproval());
    expect((await receiver().receive({ ...(method === undefined ? {} : { method }), headers, body })).status).toBe(
      status,
    );
  });
});

describe('body forms', () => {
  it.each<[string, (bytes: Uint8Array, text: string) => Uint8Array | ArrayBuffer | string]>([
    ['a Uint8Array', (bytes) => bytes],
    ['a string (its UTF-8 bytes)', (_bytes, text) => text],
    [
      'an ArrayBuffer',
      (bytes) => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer,
    ],
  ])('accepts the exact signed bytes as %s', async (_case, form) => {
    const { headers, body, text } = await signer.sign(
      testEvents.dataRequestPendingApproval({ data: { note: 'Zürich ✓' } }),
    );
    expect((await receiver().receive({ method: 'POST', headers, body: form(body, text) })).status).toBe(200);
  });
});

describe('content type', () => {
  it.each<[string, string | undefined, number]>([
    ['application/json', 'application/json', 200],
    ['a space before the parameters', 'application/json ; charset=utf-8', 200],
    ['upper case', 'APPLICATION/JSON', 200],
    ['no content type', undefined, 415],
    ['an empty content type', '', 415],
    ['application/json-seq', 'application/json-seq', 415],
    ['a comma inside a quoted parameter', 'application/json; profile="a,b"', 200],
    ['an escaped quote inside a quoted parameter', 'application/json; profile="a\\",b"', 200],
    // Repeated Content-Type headers, as fetch and nodeHeaders join them: two media types, not one.
    ['two, both JSON', 'application/json, application/json', 415],
    ['two, the first JSON with a charset', 'application/json; charset=utf-8, text/plain', 415],
    ['two, the first JSON with a quoted parameter', 'application/json; profile="x", text/plain', 415],
    ['two, the second JSON', 'text/plain, application/json', 415],
  ])('answers %s with %i', async (_case, contentType, status) => {
    const signed = await signer.sign(testEvents.dataRequestPendingApproval());
    const { 'content-type': _dropped, ...rest } = signed.headers;
    const headers = contentType === undefined ? rest : { ...rest, 'content-type': contentType };
    expect((await receiver().receive({ method: 'POST', headers, body: signed.body })).status).toBe(status);
  });
});

describe('a repeated Content-Type on Node (nodeHeaders)', () => {
  const headers = { 'content-type': 'application/json', host: 'x' };
  it('is the request headers themselves when Content-Type is sent once', () => {
    const req = { headers, rawHeaders: ['Host', 'x', 'Content-Type', 'application/json'] };
    expect(nodeHeaders(req)).toBe(headers);
    expect(nodeHeaders({ headers })).toBe(headers);
  });
  it('joins every value when it is repeated, in any case, as fetch does', () => {
    const raw = ['content-type', 'application/json', 'Host', 'x', 'CONTENT-TYPE', 'text/plain'];
    expect(nodeHeaders({ headers, rawHeaders: raw })).toEqual({
      'content-type': 'application/json, text/plain',
      host: 'x',
    });
    expect(headers['content-type']).toBe('application/json'); // a copy: the request's own headers are left alone
  });
});

describe('Service-Delivery-Attempt (spec 2.4)', () => {
  it.each<[string, string | undefined, number | undefined]>([
    ['1', '1', 1],
    ['12', '12', 12],
    ['absent', undefined, undefined],
    ['not a number', 'abc', undefined],
    ['digits followed by letters', '3x', undefined],
    ['letters followed by digits', 'x3', undefined],
    ['a negative number', '-1', undefined],
    ['zero (attempts start at 1)', '0', undefined],
    ['zeros', '000', undefined],
    ['leading zeros', '007', 7],
    ['more than 9 digits', '1234567890', undefined],
  ])('hands the handler deliveryAttempt for %s', async (_case, header, attempt) => {
    const r = receiver();
    const handler = vi.fn();
    r.onAny(handler);
    const signed = await signer.sign(testEvents.dataRequestPendingApproval());
    const { 'service-delivery-attempt': _dropped, ...rest } = signed.headers;
    const headers = header === undefined ? rest : { ...rest, 'service-delivery-attempt': header };
    expect((await r.receive({ method: 'POST', headers, body: signed.body })).status).toBe(200);
    expect(handler.mock.calls[0]![1].deliveryAttempt).toBe(attempt);
  });
});
