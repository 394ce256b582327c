/**
 * The cost of one raw RS256 signature check of the attestation token, `crypto.verify('RSA-SHA256')` of the signing
 * input against the public key, and nothing else (no header, key lookup or claims): the unit of the attested target.
 * Measured in the bench process between load runs, as CPU time (process.cpuUsage, like the servers' figure), so the
 * other processes of a shared machine do not count in it.
 */
import { createPublicKey, verify, type JsonWebKey } from 'node:crypto';

/** CPU µs per verify over one sample of about `sampleMs` of CPU time. */
export interface VerifyCost {
  sample(): number;
}

function cpuMicros(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

export function createVerifyCost(token: string, publicJwk: JsonWebKey, sampleMs = 40): VerifyCost {
  const key = createPublicKey({ key: publicJwk, format: 'jwk' });
  const dot = token.lastIndexOf('.');
  const signingInput = Buffer.from(token.slice(0, dot));
  const signature = Buffer.from(token.slice(dot + 1), 'base64url');
  const run = (n: number): number => {
    const before = cpuMicros();
    for (let i = 0; i < n; i++) {
      if (!verify('RSA-SHA256', signingInput, key, signature))
        throw new Error('the attestation token does not verify with the signer key');
    }
    return cpuMicros() - before;
  };
  // Warm-up and calibration: enough verifies for the sample to last sampleMs.
  let n = 8;
  let spent = run(n);
  while (spent < 20_000) {
    n *= 2;
    spent = run(n);
  }
  const perSample = Math.max(1, Math.round((sampleMs * 1000 * n) / spent));
  return { sample: () => run(perSample) / perSample };
}
