// 0–15 for hex digit character codes, -1 for anything else.
const HEX_VALUES = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++) {
  HEX_VALUES['0123456789abcdef'.charCodeAt(i)] = i;
  HEX_VALUES['0123456789ABCDEF'.charCodeAt(i)] = i;
}

/**
 * Decodes hex (either case), or returns undefined when a character is not a hex digit or the digits are odd in
 * number. The Web path's decoder: on Node, the platform decodes a signature's MAC with Buffer's native decoder
 * (crypto/types.ts, `decodeHex`).
 *
 * @example
 * ```ts
 * decodeHex('00ff10') // Uint8Array [0, 255, 16]
 * ```
 */
export function decodeHex(hex: string): Uint8Array | undefined {
  if ((hex.length & 1) === 1) return undefined;
  const bytes = new Uint8Array(hex.length >> 1);
  for (let i = 0; i < bytes.length; i++) {
    const high = HEX_VALUES[hex.charCodeAt(2 * i)] ?? -1;
    const low = HEX_VALUES[hex.charCodeAt(2 * i + 1)] ?? -1;
    if (high < 0 || low < 0) return undefined;
    bytes[i] = (high << 4) | low;
  }
  return bytes;
}
