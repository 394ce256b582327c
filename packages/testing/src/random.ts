/** `bytes` random bytes from the platform CSPRNG as lowercase hex: addresses, digests, ids and secrets for tests. */
export function randomHex(bytes: number): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (byte) => byte.toString(16).padStart(2, '0')).join(
    '',
  );
}
