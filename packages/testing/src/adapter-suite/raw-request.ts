/**
 * Requests written byte for byte over a socket, for the suite's cases no HTTP client sends (a repeated header, a body
 * still streaming while the answer comes), and the answer read back as `'<status> <error.code>'`.
 */
import { connect, type Socket } from 'node:net';

/** How a request ended, as a sender sees it: `'413 body_too_large'`, `'error ECONNRESET'`, … */
export type Outcome = string;

/**
 * Sends a POST with exactly `headerLines` (plus Host, Content-Length and Connection: close) and `body`; resolves with
 * the answer, or how the connection ended without one.
 */
export function sendRawRequest(url: string, headerLines: readonly string[], body: Uint8Array): Promise<Outcome> {
  return exchangeRaw(url, (socket, target) => {
    const head = [
      `POST ${target.pathname} HTTP/1.1`,
      `host: ${target.host}`,
      ...headerLines,
      `content-length: ${body.byteLength}`,
      'connection: close',
    ];
    socket.write(Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`, 'latin1'), body]));
  });
}

/**
 * Connects to `url`'s host, lets `write` send the request, and resolves with the answer once a whole one arrived
 * (even if a socket error followed it: the sender has read it), else the socket error or the close that came first,
 * or `'timeout'` after 15 s.
 */
export function exchangeRaw(url: string, write: (socket: Socket, target: URL) => void): Promise<Outcome> {
  const target = new URL(url);
  return new Promise((resolve) => {
    const received: Buffer[] = [];
    let settled = false;
    const settle = (fallback: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(parseAnswer(Buffer.concat(received)) ?? fallback);
    };
    const socket = connect(Number(target.port), target.hostname);
    const timer = setTimeout(() => settle('timeout'), 15_000);
    socket.on('data', (part: Buffer) => {
      received.push(part);
      if (parseAnswer(Buffer.concat(received)) !== undefined) settle('unreachable');
    });
    socket.on('error', (error: NodeJS.ErrnoException) => settle(`error ${error.code ?? error.message}`));
    socket.on('close', () => settle('closed without an answer'));
    write(socket, target);
  });
}

/** `'<status> <error.code>'` once `raw` holds a whole HTTP/1.1 answer (Content-Length or chunked), else undefined. */
export function parseAnswer(raw: Buffer): Outcome | undefined {
  const headEnd = raw.indexOf('\r\n\r\n');
  if (headEnd < 0) return undefined;
  const [statusLine = '', ...headerLines] = raw.subarray(0, headEnd).toString('latin1').split('\r\n');
  const headers = new Map(
    headerLines.map((line) => [
      line.slice(0, line.indexOf(':')).trim().toLowerCase(),
      line.slice(line.indexOf(':') + 1).trim(),
    ]),
  );
  let rest = raw.subarray(headEnd + 4);
  let body: Buffer;
  if (headers.has('content-length')) {
    const length = Number(headers.get('content-length'));
    if (rest.byteLength < length) return undefined;
    body = rest.subarray(0, length);
  } else {
    const parts: Buffer[] = [];
    for (;;) {
      const lineEnd = rest.indexOf('\r\n');
      if (lineEnd < 0) return undefined;
      const size = Number.parseInt(rest.subarray(0, lineEnd).toString('latin1'), 16);
      if (size === 0) break;
      if (rest.byteLength < lineEnd + 2 + size + 2) return undefined;
      parts.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
      rest = rest.subarray(lineEnd + 2 + size + 2);
    }
    body = Buffer.concat(parts);
  }
  let code: unknown;
  try {
    code = (JSON.parse(body.toString('utf8')) as { error?: { code?: unknown } }).error?.code;
  } catch {
    code = 'not-json';
  }
  return `${statusLine.split(' ')[1]} ${String(code)}`;
}
