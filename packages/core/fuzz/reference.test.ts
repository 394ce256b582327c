/**
 * The fuzzer's judge judged: reference.ts must accept what the spec allows and refuse what it forbids, or the
 * fuzz properties (receiver.fuzz.test.ts) would pass whatever the core does. One spec rule per case, each built
 * with the same builders the fuzzer uses.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  buildBodyMutationCase,
  buildClaimsCase,
  buildEncodingCase,
  buildHostileCase,
  buildJwtHeaderCase,
  buildSignatureCase,
  type BuiltDelivery,
  type ClaimsCase,
  type EncodingCase,
  type HostileCase,
  type JwtHeaderCase,
  type SigField,
} from './arbitraries.js';
import { referenceVerdict, type ReferenceConfig } from './reference.js';
import { createFuzzWorld, KIDS, type FuzzWorld } from './world.js';
import type { Mode } from './harness.js';

let world: FuzzWorld;
beforeAll(async () => {
  world = await createFuzzWorld();
});

function config(mode: Mode): ReferenceConfig {
  return {
    nowMs: world.nowMs,
    toleranceSeconds: 300,
    ...(mode !== 'attestation-only' ? { secrets: world.referenceSecrets } : {}),
    ...(mode !== 'hmac-only'
      ? {
          attestation: {
            issuer: world.issuer,
            audience: world.audience,
            jwks: world.jwks,
            leewaySeconds: world.leewaySeconds,
          },
        }
      : {}),
  };
}

/** `true` when the judge accepts, else the reason it gives. */
function judge(mode: Mode, delivery: BuiltDelivery): true | string {
  const verdict = referenceVerdict(config(mode), delivery.headers, delivery.body);
  return verdict.ok ? true : verdict.reason;
}

const RELEASED = 0; // world.attested[0] is a kyb.data_request.released
const WALLET = 1; // world.attested[1] is a kyb.business.wallet_address_changed
const typ = (value: string): [string, string] => ['typ', JSON.stringify(value)];
const ALG: [string, string] = ['alg', '"RS256"'];
const KID: [string, string] = ['kid', JSON.stringify(KIDS.main)];

describe('reference: attestation (spec 5.5)', () => {
  const header = (members: [string, string][], signWith: JwtHeaderCase['signWith'] = 'kid'): JwtHeaderCase => ({
    mode: 'attestation-only',
    pick: RELEASED,
    header: members,
    signWith,
  });
  it.each<[string, JwtHeaderCase, true | string]>([
    ['the genuine header', header([ALG, KID, typ('kyb-attestation+jwt')]), true],
    ['typ in another ASCII case with application/', header([ALG, KID, typ('Application/KYB-Attestation+JWT')]), true],
    ['typ with KELVIN SIGN for k', header([ALG, KID, typ('\u212ayb-attestation+jwt')]), 'attestation: typ'],
    ['typ with a dotless i', header([ALG, KID, typ('kyb-attestat\u0131on+jwt')]), 'attestation: typ'],
    ['typ JWT (a login token)', header([ALG, KID, typ('JWT')]), 'attestation: typ'],
    ['no typ', header([ALG, KID]), 'attestation: typ'],
    ['alg none', header([['alg', '"none"'], KID, typ('kyb-attestation+jwt')]), 'attestation: alg'],
    ['alg rs256', header([['alg', '"rs256"'], KID, typ('kyb-attestation+jwt')]), 'attestation: alg'],
    ['crit present', header([ALG, KID, typ('kyb-attestation+jwt'), ['crit', '["exp"]']]), 'attestation: crit'],
    [
      'a 1024-bit key',
      header([ALG, ['kid', JSON.stringify(KIDS.weak)], typ('kyb-attestation+jwt')]),
      'attestation: no usable key for kid',
    ],
    [
      'a key published for use enc',
      header([ALG, ['kid', JSON.stringify(KIDS.enc)], typ('kyb-attestation+jwt')]),
      'attestation: no usable key for kid',
    ],
    [
      'a key published for RS384',
      header([ALG, ['kid', JSON.stringify(KIDS.rs384)], typ('kyb-attestation+jwt')]),
      'attestation: no usable key for kid',
    ],
    [
      'an unknown kid',
      header([ALG, ['kid', '"nope"'], typ('kyb-attestation+jwt')]),
      'attestation: no usable key for kid',
    ],
    [
      'a forged signature under the right kid',
      header([ALG, KID, typ('kyb-attestation+jwt')], 'stranger'),
      'attestation: signature',
    ],
  ])('JOSE header: %s', (_name, c, expected) => {
    expect(judge(c.mode, buildJwtHeaderCase(world, c))).toBe(expected);
  });

  const claims = (
    changes: ClaimsCase['claims'],
    pick = RELEASED,
    envelope: ClaimsCase['envelope'] = 'same',
  ): ClaimsCase => ({
    mode: 'attestation-only',
    pick,
    claims: changes,
    extra: [],
    envelope,
  });
  const now = () => world.nowS;
  const leeway = () => world.leewaySeconds;
  it.each<[string, () => ClaimsCase, true | string]>([
    ['exp one second inside the leeway', () => claims({ exp: String(now() - leeway() + 1) }), true],
    ['exp at the leeway', () => claims({ exp: String(now() - leeway()) }), 'attestation: exp'],
    ['exp 1e400 (Infinity)', () => claims({ exp: '1e400' }), 'attestation: exp'],
    ['exp as a string', () => claims({ exp: '"9999999999"' }), 'attestation: exp'],
    ['no exp', () => claims({ exp: null }), 'attestation: exp'],
    ['iat at the leeway', () => claims({ iat: String(now() + leeway()) }), true],
    ['iat past the leeway', () => claims({ iat: String(now() + leeway() + 1) }), 'attestation: iat'],
    ['nbf past the leeway', () => claims({ nbf: String(now() + leeway() + 1) }), 'attestation: nbf'],
    ['nbf -1e400', () => claims({ nbf: '-1e400' }), 'attestation: nbf'],
    ['aud as an array that holds the audience', () => claims({ aud: JSON.stringify(['other', world.audience]) }), true],
    ['aud in upper case', () => claims({ aud: JSON.stringify(world.audience.toUpperCase()) }), 'attestation: aud'],
    ['another iss', () => claims({ iss: '"https://auth.kyb.example.test"' }), 'attestation: iss'],
    ['seq as a string', () => claims({ seq: '"0"' }), 'attestation: seq relabelled'],
    ['request_id of another stream', () => claims({ request_id: '"dr_other"' }), 'attestation: request_id relabelled'],
    [
      'a type claim naming another type',
      () => claims({ event: '"kyb.data_request.refused"' }),
      'attestation: signed event differs',
    ],
    [
      'the released payload under another type',
      () => claims({ answers: '[]' }, WALLET),
      'attestation: released payload under another type',
    ],
    [
      'an envelope event_id in lower case',
      () => claims({}, RELEASED, 'event_id lower case'),
      'attestation: event_id relabelled',
    ],
    [
      'data contradicting a signed claim',
      () => claims({}, RELEASED, 'data contradicts a signed claim'),
      'attestation: data.iss differs from its signed copy',
    ],
  ])('claims: %s', (_name, c, expected) => {
    expect(judge('attestation-only', buildClaimsCase(world, c()))).toBe(expected);
  });

  const encoding = (transforms: EncodingCase['transforms'], resign = true): EncodingCase => ({
    mode: 'attestation-only',
    pick: RELEASED,
    transforms,
    resign,
  });
  it.each<[string, EncodingCase, true | string]>([
    [
      'standard base64 in the signature',
      encoding([{ t: 'standardAlphabet', seg: 2 }]),
      'attestation: segment not strict base64url',
    ],
    [
      'padding on the claims',
      encoding([{ t: 'padding', seg: 1, count: 1 }]),
      'attestation: segment not strict base64url',
    ],
    [
      'a space inside the header',
      encoding([{ t: 'insert', seg: 0, pos: 5, char: ' ' }]),
      'attestation: segment not strict base64url',
    ],
    [
      'spare bits set in the last character',
      encoding([{ t: 'nonCanonicalTail', seg: 0 }]),
      'attestation: segment not strict base64url',
    ],
    ['a BOM before the header JSON, signed', encoding([{ t: 'bomInJson', seg: 0 }]), true],
    [
      'a header that is not UTF-8, signed',
      encoding([{ t: 'latin1Json', seg: 0 }]),
      'attestation: header not a JSON object',
    ],
    ['a fourth segment', encoding([{ t: 'suffix', text: '.x' }]), 'attestation: not three segments'],
  ])('encoding: %s', (_name, c, expected) => {
    expect(judge(c.mode, buildEncodingCase(world, c))).toBe(expected);
  });
});

describe('reference: signature header (spec 5.7, 8)', () => {
  const t = (offset: number, form: Extract<SigField, { k: 't' }>['form'] = 'plain'): SigField => ({
    k: 't',
    key: 't',
    form,
    offset,
  });
  const v1: SigField = { k: 'v1', key: 'v1', mac: 'right' };
  const kv = (value: string): SigField => ({ k: 'kv', key: 'kv', value });
  const header = (fields: SigField[], mode: Mode = 'hmac-only') =>
    buildSignatureCase(world, { mode, pick: 2, fields, separator: ',', padding: ['', ''] });
  it.each<[string, () => BuiltDelivery, true | string]>([
    ['the genuine header', () => header([t(0), v1, kv('3')]), true],
    ['t exactly 300 s old', () => header([t(-300), v1, kv('3')]), true],
    ['t 301 s old', () => header([t(-301), v1, kv('3')]), 'hmac: t outside the skew'],
    ['t 301 s ahead', () => header([t(301), v1, kv('3')]), 'hmac: t outside the skew'],
    ['t with leading zeros, MACed as sent', () => header([t(0, 'zeros'), v1, kv('3')]), true],
    ['t with a plus sign', () => header([t(0, 'plus'), v1, kv('3')]), 'hmac: t is not unix seconds'],
    ['v1 in upper case hex', () => header([t(0), { k: 'v1', key: 'v1', mac: 'upper' }, kv('3')]), true],
    [
      'a MAC under another secret',
      () => header([t(0), { k: 'v1', key: 'v1', mac: 'wrongSecret' }, kv('3')]),
      'hmac: MAC differs',
    ],
    ['kv 2 inside its overlap', () => header([t(0), v1, kv('2')]), true],
    ['kv 1 past its overlap', () => header([t(0), v1, kv('1')]), 'hmac: kv past its overlap'],
    ['an unknown kv', () => header([t(0), v1, kv('9')]), 'hmac: kv unknown'],
    ['t twice', () => header([t(0), v1, kv('3'), t(1)]), 'hmac: t, v1 and kv must each appear once'],
    ['no kv', () => header([t(0), v1]), 'hmac: t, v1 and kv must each appear once'],
  ])('%s', (_name, build, expected) => {
    expect(judge('hmac-only', build())).toBe(expected);
  });
});

describe('reference: envelope and modes (spec 2.3, 5.4)', () => {
  const hostile = (fields: HostileCase['fields'], mode: Mode = 'hmac-only', pick = 2): HostileCase => ({
    mode,
    pick,
    fields,
    extra: [],
    borrow: { from: 'own' },
  });
  it.each<[string, HostileCase, true | string]>([
    ['a genuine unattested event, HMAC only', hostile({}), true],
    ['a 27-character event_id', hostile({ event_id: '"01KA00000000000000000000001"' }), 'envelope: event_id'],
    ['a seq beyond 2^53', hostile({ seq: '9007199254740993' }), 'envelope: seq'],
    ['a negative seq', hostile({ seq: '-1' }), 'envelope: seq'],
    ['a fractional timestamp', hostile({ timestamp: '1.5' }), 'envelope: timestamp'],
    ['data as an array', hostile({ data: '[]' }), 'envelope: data'],
    ['api_version not date-shaped', hostile({ api_version: '"2026-1-01"' }), 'envelope: api_version'],
    [
      'an attested type without attestation',
      hostile({ event: '"kyb.business.wallet_address_changed"' }),
      'attested type without attestation',
    ],
    [
      'an unattested event in attestation-only mode',
      hostile({}, 'attestation-only'),
      'unauthenticated (no attestation, no secrets)',
    ],
    [
      'an attestation on a type the spec marks unattested',
      { ...hostile({}, 'attestation-only'), borrow: { from: 'pool', index: RELEASED, takeAttestation: true } },
      'attestation: attestation on a type the spec marks unattested',
    ],
  ])('%s', (_name, c, expected) => {
    expect(judge(c.mode, buildHostileCase(world, c))).toBe(expected);
  });

  it.each<[string, Parameters<typeof buildBodyMutationCase>[1], true | string]>([
    [
      'a BOM before a signed body is tolerated',
      { mode: 'hmac-only', pick: 2, mutations: [{ op: 'prefix', bytes: 'bom' }], resign: true },
      true,
    ],
    [
      'an overlong UTF-8 sequence in a signed body',
      { mode: 'hmac-only', pick: 2, mutations: [{ op: 'insert', pos: 1, bytes: 'overlongNul' }], resign: true },
      'body is not UTF-8 JSON',
    ],
    [
      'a body changed after signing',
      { mode: 'hmac-only', pick: 2, mutations: [{ op: 'suffix', bytes: 'ws' }], resign: false },
      'hmac: MAC differs',
    ],
  ])('%s', (_name, c, expected) => {
    expect(judge(c.mode, buildBodyMutationCase(world, c))).toBe(expected);
  });
});
