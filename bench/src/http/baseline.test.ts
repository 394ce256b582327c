import { createTestSigner, testEvents } from '@kyb-webhooks/testing';
import { describe, expect, it } from 'vitest';
import { BENCH_NOW_MS } from '../fixtures.js';
import { createHandwrittenReceiver, createSeenEvents, createTokenCheck } from './baseline.js';

const signer = await createTestSigner({ now: BENCH_NOW_MS });
const delivery = await signer.sign(testEvents.dataRequestPendingApproval());
const body = Buffer.from(delivery.body);
const header = delivery.headers['service-kyb-signature'];

describe('createHandwrittenReceiver', () => {
  it('answers 200 to a signed delivery', () => {
    const answer = createHandwrittenReceiver({ ...signer.secrets }, { keyPerRequest: false });
    expect(answer(header, body)).toBe(200);
  });

  it('answers 401 to a wrong MAC', () => {
    const answer = createHandwrittenReceiver({ ...signer.secrets }, { keyPerRequest: false });
    expect(answer(signer.hmacHeader(delivery.body, { secret: 'whsec_forged' }), body)).toBe(401);
  });

  it('answers 401 to a signature outside the 5-minute skew', () => {
    const answer = createHandwrittenReceiver({ ...signer.secrets }, { keyPerRequest: false });
    expect(answer(signer.hmacHeader(delivery.body, { timestamp: BENCH_NOW_MS / 1000 - 301 }), body)).toBe(401);
  });

  it('answers 400 to signed bytes that are not JSON', () => {
    const answer = createHandwrittenReceiver({ ...signer.secrets }, { keyPerRequest: false });
    expect(answer(signer.hmacHeader('not json'), Buffer.from('not json'))).toBe(400);
  });
});

const attested = await signer.withAttestation(testEvents.dataRequestReleased());

describe('createTokenCheck: the raw verify of the "+ crypto.verify" endpoint', () => {
  it('accepts the attestation the signer made', () => {
    expect(createTokenCheck(signer.jwks)(attested.attestation)).toBe(true);
  });

  it('refuses the attestation with one signature byte changed', () => {
    const token = attested.attestation!;
    const tampered = token.slice(0, -2) + (token.at(-2) === 'A' ? 'B' : 'A') + token.at(-1);
    expect(createTokenCheck(signer.jwks)(tampered)).toBe(false);
  });

  it('refuses a token whose kid is not in the JWKS', async () => {
    const other = await createTestSigner({ now: BENCH_NOW_MS });
    expect(
      createTokenCheck(signer.jwks)((await other.withAttestation(testEvents.dataRequestReleased())).attestation),
    ).toBe(false);
  });

  it('makes the hand-written receiver answer 401 to a delivery without a valid attestation', async () => {
    const answer = createHandwrittenReceiver(
      { ...signer.secrets },
      { keyPerRequest: true, verifyTokensOf: signer.jwks },
    );
    const good = await signer.sign(attested);
    const unattested = await signer.sign(testEvents.dataRequestPendingApproval());
    expect([
      answer(good.headers['service-kyb-signature'], Buffer.from(good.body)),
      answer(unattested.headers['service-kyb-signature'], Buffer.from(unattested.body)),
    ]).toEqual([200, 401]);
  });
});

describe('createSeenEvents', () => {
  it('reports an event id seen before as a duplicate', () => {
    const firstTime = createSeenEvents(false);
    expect([firstTime('a'), firstTime('a')]).toEqual([true, false]);
  });

  it('records every request under its own key with keyPerRequest', () => {
    const firstTime = createSeenEvents(true);
    expect([firstTime('a'), firstTime('a')]).toEqual([true, true]);
  });

  it('forgets the oldest ids past 100,000, so memory stays bounded', () => {
    const firstTime = createSeenEvents(false);
    for (let i = 0; i <= 100_000; i++) firstTime(`id-${i}`);
    expect([firstTime('id-0'), firstTime('id-100000')]).toEqual([true, false]);
  });
});
