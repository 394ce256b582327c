// Spec 5.5 through createAttestationVerifier on its own: every claim the binding needs is required before any
// comparison (a token without one is an invalid token, not a relabelled delivery), the detail of a refused alg names
// what the header said, the detail of an unexpected iss or aud shows the value cut short, and the memo of decoded headers stays bounded (at most 16 headers of at most 1,024
// characters), seen through the crypto port: a remembered header is not decoded again, any other one is.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestSigner, testEvents, type TestSigner } from '../../test-kit.js';
import { createAttestationVerifier, type EnvelopeIdentity } from './attestation.js';
import { platformCrypto as nodeCrypto } from './crypto/node.js';
import { platformCrypto as webCrypto } from './crypto/web.js';
import type { PlatformCrypto } from './crypto/types.js';
import { KybWebhookError } from '../errors.js';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);

let signer: TestSigner;
beforeAll(async () => {
  signer = await createTestSigner({ now: NOW });
});

async function answerOf(promise: Promise<unknown>): Promise<{ code: string; detail?: string | undefined }> {
  try {
    await promise;
    return { code: 'ok' };
  } catch (error) {
    if (error instanceof KybWebhookError) return { code: error.code, detail: error.detail };
    throw error;
  }
}

describe.each<[string, PlatformCrypto]>([
  ['node:crypto', nodeCrypto],
  ['Web Crypto', webCrypto],
])('required claims (%s)', (_path, crypto) => {
  const verify = () =>
    createAttestationVerifier(
      { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
      () => NOW,
      crypto,
    );

  it.each(['iss', 'aud', 'exp', 'iat', 'event_id', 'stream_id', 'seq', 'request_id'])(
    'refuses a token without %s as attestation_invalid, naming the claim',
    async (claim) => {
      const envelope = testEvents.dataRequestReleased();
      const token = await signer.attest(envelope, { claims: { [claim]: undefined } });
      expect(await answerOf(verify()(token, envelope as unknown as EnvelopeIdentity))).toEqual({
        code: 'attestation_invalid',
        detail: `missing required "${claim}" claim`,
      });
    },
  );

  it('refuses a header without alg, saying alg null', async () => {
    const envelope = testEvents.dataRequestReleased();
    // The test kit signs a header without alg by hand (jose would refuse); the signature is never reached.
    const token = await signer.attest(envelope, { header: { alg: undefined } });
    expect(await answerOf(verify()(token, envelope as unknown as EnvelopeIdentity))).toEqual({
      code: 'attestation_invalid',
      detail: 'alg null',
    });
  });
});

/** The platform crypto, counting how many JOSE segments it decodes to text (headers and claims alike). */
function countingCrypto(): PlatformCrypto & { decoded: number } {
  const counting = {
    ...nodeCrypto,
    decoded: 0,
    decodeUtf8(bytes: Uint8Array) {
      counting.decoded += 1;
      return nodeCrypto.decodeUtf8(bytes);
    },
  };
  return counting;
}

describe('the memo of decoded headers', () => {
  /** A verifier and a function that verifies a genuine token with header parameter `x` and says how many segments it decoded. */
  function setup() {
    const crypto = countingCrypto();
    const verify = createAttestationVerifier(
      { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
      () => NOW,
      crypto,
    );
    const decodedFor = async (x: string): Promise<number> => {
      const envelope = testEvents.dataRequestReleased();
      const token = await signer.attest(envelope, { header: { x } });
      const before = crypto.decoded;
      await verify(token, envelope as unknown as EnvelopeIdentity);
      return crypto.decoded - before;
    };
    return decodedFor;
  }

  /** A header parameter value that makes the encoded header exactly `length` characters long. */
  async function padFor(length: number): Promise<string> {
    const envelope = testEvents.dataRequestReleased();
    for (let pad = ''; pad.length < 2 * length; pad += 'x') {
      const token = await signer.attest(envelope, { header: { x: pad } });
      const headerLength = token.indexOf('.');
      if (headerLength === length) return pad;
      if (headerLength > length) break;
    }
    throw new Error(`no padding gives a header of ${length} characters`);
  }

  it('decodes a header once: the next delivery with the same header decodes only its claims', async () => {
    const decodedFor = setup();
    expect([await decodedFor('a'), await decodedFor('a'), await decodedFor('a')]).toEqual([2, 1, 1]);
  });

  it('remembers 16 headers, and forgets the oldest when a 17th comes', async () => {
    const decodedFor = setup();
    const names = Array.from({ length: 17 }, (_, index) => `h${index}`);
    for (const name of names.slice(0, 16)) expect(await decodedFor(name)).toBe(2);
    // 16 remembered: the first is still there.
    expect(await decodedFor('h0')).toBe(1);
    // A 17th pushes out the oldest (h0), which must be decoded again; h2 is still remembered.
    expect(await decodedFor('h16')).toBe(2);
    expect(await decodedFor('h0')).toBe(2);
    expect(await decodedFor('h2')).toBe(1);
  });

  it('remembers a header of 1,024 characters but never a longer one', async () => {
    const decodedFor = setup();
    const longest = await padFor(1024);
    expect([await decodedFor(longest), await decodedFor(longest)]).toEqual([2, 1]);
    const tooLong = `${longest}xxx`;
    expect([await decodedFor(tooLong), await decodedFor(tooLong)]).toEqual([2, 2]);
  });
});

describe('the cause of a malformed token, for the log entry', () => {
  const verify = () =>
    createAttestationVerifier({ issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks }, () => NOW);

  async function refusalOf(token: string): Promise<{ code: string; detail?: string; cause?: string }> {
    const envelope = testEvents.dataRequestReleased();
    try {
      await verify()(token, envelope as unknown as EnvelopeIdentity);
      return { code: 'ok' };
    } catch (error) {
      if (!(error instanceof KybWebhookError)) throw error;
      return { code: error.code, detail: error.detail as string, cause: (error.cause as Error | undefined)?.message };
    }
  }

  it('a header in padded base64: the cause says it is not canonical base64url', async () => {
    expect(await refusalOf('e30=.e30.AAAA')).toEqual({
      code: 'attestation_invalid',
      detail: 'header is not base64url UTF-8 JSON',
      cause: 'not canonical base64url',
    });
  });

  it('a header that is a JSON array: the cause says it is not a JSON object', async () => {
    expect(await refusalOf(`${Buffer.from('[]').toString('base64url')}.e30.AAAA`)).toEqual({
      code: 'attestation_invalid',
      detail: 'header is not base64url UTF-8 JSON',
      cause: 'not a JSON object',
    });
  });

  // Three segments, the first empty: a JWS whose header is not JSON, not a token of another shape.
  it('an empty header segment: a header that is not JSON', async () => {
    expect((await refusalOf('.e30.AAAA')).detail).toBe('header is not base64url UTF-8 JSON');
  });
});

describe('the detail of an unexpected iss or aud shows the value received, cut short', () => {
  async function detailOf(claims: Record<string, unknown>): Promise<string | undefined> {
    const verify = createAttestationVerifier(
      { issuer: signer.issuer, audience: signer.audience, jwks: signer.jwks },
      () => NOW,
    );
    const envelope = testEvents.dataRequestReleased();
    const answer = await answerOf(
      verify(await signer.attest(envelope, { claims }), envelope as unknown as EnvelopeIdentity),
    );
    expect(answer.code).toBe('attestation_invalid');
    return answer.detail;
  }

  const audiences = (count: number) => Array.from({ length: count }, (_, index) => `merchant-${index + 1}`);
  const audDetail = (shown: string) =>
    `unexpected "aud" claim value ${shown}, expected ${JSON.stringify(signer.audience)} (attestation.audience)`;

  it.each<[number, string]>([
    [5, '["merchant-1","merchant-2","merchant-3","merchant-4","merchant-5"]'],
    [6, '["merchant-1","merchant-2","merchant-3","merchant-4","merchant-5","… 1 more"]'],
    [12, '["merchant-1","merchant-2","merchant-3","merchant-4","merchant-5","… 7 more"]'],
  ])('an aud of %i audiences, none of them ours, shows at most the first five', async (count, shown) => {
    expect(await detailOf({ aud: audiences(count) })).toBe(audDetail(shown));
  });

  it('an iss whose JSON is 200 characters is shown whole', async () => {
    const iss = 'i'.repeat(198);
    expect(await detailOf({ iss })).toBe(
      `unexpected "iss" claim value "${iss}", expected ${JSON.stringify(signer.issuer)} (attestation.issuer)`,
    );
  });

  it('an iss whose JSON is longer is cut after 200 characters', async () => {
    const iss = 'i'.repeat(199);
    expect(await detailOf({ iss })).toBe(
      `unexpected "iss" claim value "${iss}…, expected ${JSON.stringify(signer.issuer)} (attestation.issuer)`,
    );
  });
});
