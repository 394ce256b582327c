// `createHmac` of `node:crypto` for the test scaffolding only (the suites' HMAC oracle and the test kit's signer),
// bundled into the workerd run instead of the real module, which workerd without nodejs_compat does not have; the other
// exports of the stand-in throw when used (see scripts/runtimes/workerd.mjs). The core itself never
// reaches this file: the bundler fails when a core source module imports `node:` (see scripts/runtimes/workerd.mjs).
// An HMAC-SHA256 in plain JavaScript, synchronous like Node's, so the oracle stays independent of the Web Crypto code
// under test.

const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);

function sha256(bytes) {
  const length = bytes.length;
  const padded = new Uint8Array(Math.ceil((length + 9) / 64) * 64);
  padded.set(bytes);
  padded[length] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, Math.floor(length / 0x20000000));
  view.setUint32(padded.length - 4, (length * 8) >>> 0);
  const h = new Uint32Array([
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
  ]);
  const w = new Uint32Array(64);
  const rotr = (x, n) => (x >>> n) | (x << (32 - n));
  for (let offset = 0; offset < padded.length; offset += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(offset + i * 4);
    for (let i = 16; i < 64; i++) {
      const s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >>> 3);
      const s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >>> 10);
      w[i] = (w[i - 16] + s0 + w[i - 7] + s1) >>> 0;
    }
    let [a, b, c, d, e, f, g, hh] = h;
    for (let i = 0; i < 64; i++) {
      const t1 = (hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i]) >>> 0;
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) >>> 0;
      [hh, g, f, e, d, c, b, a] = [g, f, e, (d + t1) >>> 0, c, b, a, (t1 + t2) >>> 0];
    }
    [a, b, c, d, e, f, g, hh].forEach((value, i) => (h[i] = (h[i] + value) >>> 0));
  }
  const out = new Uint8Array(32);
  const outView = new DataView(out.buffer);
  h.forEach((value, i) => outView.setUint32(i * 4, value));
  return out;
}

const encoder = new TextEncoder();
const toBytes = (data) =>
  typeof data === 'string' ? encoder.encode(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
const concat = (parts) => {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
};

/** `createHmac('sha256', key).update(…).digest('hex' | 'base64' | 'base64url' | undefined)`, nothing else. */
export function createHmac(algorithm, key) {
  if (String(algorithm).toLowerCase() !== 'sha256')
    throw new Error(`the workerd test shim of node:crypto has only sha256, not ${algorithm}`);
  let keyBytes = toBytes(key);
  if (keyBytes.length > 64) keyBytes = sha256(keyBytes);
  const block = new Uint8Array(64);
  block.set(keyBytes);
  const parts = [];
  const hmac = {
    update(data) {
      parts.push(toBytes(data));
      return hmac;
    },
    digest(encoding) {
      const inner = sha256(concat([block.map((byte) => byte ^ 0x36), ...parts]));
      const mac = sha256(concat([block.map((byte) => byte ^ 0x5c), inner]));
      if (encoding === 'hex') return [...mac].map((byte) => byte.toString(16).padStart(2, '0')).join('');
      if (encoding === 'base64' || encoding === 'base64url') {
        const base64 = btoa(String.fromCharCode(...mac));
        return encoding === 'base64' ? base64 : base64.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
      }
      if (encoding === undefined) return mac;
      throw new Error(`the workerd test shim of node:crypto cannot digest to ${encoding}`);
    },
  };
  return hmac;
}
