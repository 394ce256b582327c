// The part of Node's `Buffer` that the suites' scaffolding uses (building hostile tokens byte by byte), for the workerd
// run. It is imported into *.test.ts files only, never made global: a core module that used `Buffer` would still
// fail on workerd, as it would for a user. Decoding is as lenient as Node's (characters outside the alphabet are
// skipped, a lone trailing character is dropped), since the suites compare the receiver against exactly that.
const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const SEXTET = new Map([...B64].map((char, i) => [char, i]).concat([...B64URL].map((char, i) => [char, i])));

function decodeBase64(text) {
  const values = [];
  for (const char of text) {
    if (char === '=') break;
    const value = SEXTET.get(char);
    if (value !== undefined) values.push(value);
  }
  const bytes = [];
  for (let i = 0; i + 1 < values.length; i += 4) {
    const [a, b, c = -1, d = -1] = values.slice(i, i + 4);
    bytes.push(((a << 2) | (b >> 4)) & 0xff);
    if (c >= 0) bytes.push(((b << 4) | (c >> 2)) & 0xff);
    if (d >= 0) bytes.push(((c << 6) | d) & 0xff);
  }
  return bytes;
}

function encodeBase64(bytes, alphabet, pad) {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const [a, b = 0, c = 0] = [bytes[i], bytes[i + 1], bytes[i + 2]];
    const n = (a << 16) | (b << 8) | c;
    const chars = [n >> 18, (n >> 12) & 63, (n >> 6) & 63, n & 63].map((value) => alphabet[value]);
    const kept = Math.min(4, Math.ceil(((bytes.length - i) * 4) / 3));
    out += chars.slice(0, kept).join('') + (pad ? '='.repeat(4 - kept) : '');
  }
  return out;
}

export class Buffer extends Uint8Array {
  static from(value, encodingOrOffset, length) {
    if (typeof value === 'string') {
      const encoding = (encodingOrOffset ?? 'utf8').toLowerCase();
      if (encoding === 'base64' || encoding === 'base64url') return new Buffer(decodeBase64(value));
      if (encoding === 'hex')
        return new Buffer((value.match(/../g) ?? []).map((pair) => parseInt(pair, 16)).filter((n) => !Number.isNaN(n)));
      if (encoding === 'latin1' || encoding === 'binary')
        return new Buffer([...value].map((char) => char.charCodeAt(0) & 0xff));
      return new Buffer(new TextEncoder().encode(value));
    }
    if (value instanceof ArrayBuffer)
      return new Buffer(value, encodingOrOffset ?? 0, length ?? value.byteLength - (encodingOrOffset ?? 0));
    return new Buffer(value);
  }
  static concat(parts) {
    const out = new Buffer(parts.reduce((sum, part) => sum + part.length, 0));
    let at = 0;
    for (const part of parts) {
      out.set(part, at);
      at += part.length;
    }
    return out;
  }
  static byteLength(text) {
    return typeof text === 'string' ? new TextEncoder().encode(text).length : text.byteLength;
  }
  static isBuffer(value) {
    return value instanceof Buffer;
  }
  toString(encoding = 'utf8') {
    switch (encoding.toLowerCase()) {
      case 'base64':
        return encodeBase64(this, B64, true);
      case 'base64url':
        return encodeBase64(this, B64URL, false);
      case 'hex':
        return [...this].map((byte) => byte.toString(16).padStart(2, '0')).join('');
      case 'latin1':
      case 'binary':
        return String.fromCharCode(...this);
      default:
        return new TextDecoder().decode(this);
    }
  }
  equals(other) {
    return this.length === other.length && this.every((byte, i) => byte === other[i]);
  }
}
