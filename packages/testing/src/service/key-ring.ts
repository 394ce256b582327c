import { signAttestation } from '../attestation.js';
import { generateAttestationKey, type AttestationKey, type Jwks } from '../keys.js';

/**
 * The service's attestation keys: one current key signs, older keys stay published in the JWKS after a rotation
 * until they are retired, so tokens signed before the rotation keep verifying meanwhile.
 */
export interface KeyRing {
  readonly current: AttestationKey;
  readonly jwks: Jwks;
  rotate(kid?: string): Promise<AttestationKey>;
  retire(kid: string): boolean;
  sign(claims: Record<string, unknown>): Promise<string>;
}

export async function createKeyRing(kid?: string): Promise<KeyRing> {
  let current = await generateAttestationKey(kid);
  const published: AttestationKey[] = [current];
  return {
    get current() {
      return current;
    },
    get jwks() {
      return { keys: published.map((key) => key.publicJwk) };
    },
    async rotate(nextKid) {
      current = await generateAttestationKey(nextKid);
      published.push(current);
      return current;
    },
    retire(retiredKid) {
      if (retiredKid === current.kid)
        throw new TypeError('The current key cannot be retired: call rotateKeys() first.');
      const index = published.findIndex((key) => key.kid === retiredKid);
      if (index < 0) return false;
      published.splice(index, 1);
      return true;
    },
    sign(claims) {
      return signAttestation(claims, current);
    },
  };
}
