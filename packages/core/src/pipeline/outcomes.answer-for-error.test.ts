import { beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, testStream, type TestSigner } from '../../test-kit.js';
import { ERRORS, KybWebhookError, type ErrorCode } from '../errors.js';
import { createReceiver } from '../receiver.js';
import { answerForError } from './outcomes.js';

const NOW = Date.UTC(2026, 10, 28, 12, 0, 0);
let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW, secrets: { '1': 'answer-secret' } });
});

describe('answerForError', () => {
  it('answers a refusal thrown by receiver.verify as receive would answer the same delivery', async () => {
    const receiver = createReceiver({ secrets: { '1': 'answer-secret' }, now: () => NOW, logger: false });
    const { headers } = await signer.sign(testStream(['kyb.data_request.pending_approval'])[0]!);
    const forged = { method: 'POST', headers, body: new TextEncoder().encode('{"forged":true}') };
    const thrown = await receiver.verify(forged).then(
      () => undefined,
      (error: unknown) => error,
    );
    const received = await receiver.receive(forged);
    expect(answerForError(thrown)).toEqual({ status: received.status, headers: received.headers, body: received.body });
    expect(answerForError(thrown)).toMatchObject({ status: 401, body: { error: { code: 'signature_mismatch' } } });
  });

  it.each(Object.keys(ERRORS) as ErrorCode[])('answers %s with its status and generic message', (code) => {
    const answer = answerForError(new KybWebhookError(code, undefined, { detail: 'detail for the log only' }));
    expect(answer.status).toBe(ERRORS[code].status);
    expect(answer.body).toEqual({ error: { code, message: ERRORS[code].message } });
  });

  it('adds Allow to a 405', () => {
    expect(answerForError(new KybWebhookError('method_not_allowed')).headers).toEqual({ allow: 'POST' });
  });

  it.each([
    ['a plain Error (a bug)', new Error('secret-looking detail')],
    ['config_invalid', new KybWebhookError('config_invalid', 'fix the option')],
    ['a string', 'oops'],
    ['undefined', undefined],
  ])('answers %s 500 internal_error, so nothing is acknowledged and no detail leaks', (_, error) => {
    const answer = answerForError(error);
    expect(answer).toEqual({
      status: 500,
      headers: {},
      body: { error: { code: 'internal_error', message: ERRORS.internal_error.message } },
    });
  });
});
