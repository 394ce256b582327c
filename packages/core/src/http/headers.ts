/**
 * Request headers as adapters have them: a Web `Headers` or a Node-style record (lower- or mixed-case keys).
 *
 * @example
 * ```ts
 * const headers: HeadersInput = request.headers // a fetch Request's Headers, or a Node req.headers record
 * ```
 */
export type HeadersInput = Headers | Record<string, string | string[] | undefined>;

// HTTP field names are printable ASCII (RFC 9110 tchar); anything else never names a header.
const ASCII = /^[!-~]*$/;

/**
 * Reads one header case-insensitively (ASCII case only). Repeated headers are joined with ", " as HTTP allows, which makes a
 * repeated signature header fail the strict grammar instead of silently picking one.
 *
 * @example
 * ```ts
 * readHeader({ 'Service-KYB-Signature': 't=1,v1=ab,kv=3' }, 'service-kyb-signature') // 't=1,v1=ab,kv=3'
 * ```
 */
export function readHeader(headers: HeadersInput, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const own = record[name];
  const value = own === undefined ? valueUnderOtherCase(record, name) : own;
  // typeof first: nearly every value is a string, and Array.isArray is a call where the code is not yet optimized.
  return typeof value === 'object' && Array.isArray(value) ? value.join(', ') : value;
}

// A function of its own: Node's headers are lower-cased already, so deliveries rarely get here, and the loop would
// otherwise be compiled into every caller the JIT inlines readHeader into.
function valueUnderOtherCase(
  record: Record<string, string | string[] | undefined>,
  name: string,
): string | string[] | undefined {
  for (const key of Object.keys(record)) {
    // ASCII-only case folding, as HTTP field names are ASCII: toLowerCase() alone would map a KELVIN SIGN to "k".
    if (key.length === name.length && ASCII.test(key) && key.toLowerCase() === name) return record[key];
  }
  return undefined;
}

/** What {@link nodeHeaders} reads of a Node request (`http.IncomingMessage`). */
interface NodeRequestHeaders {
  headers: Record<string, string | string[] | undefined>;
  rawHeaders?: readonly string[] | undefined;
}

/**
 * A Node request's headers as the receiver must read them. Node keeps only the first of a repeated Content-Type and
 * drops the others, where fetch (and Node itself, for the signature headers) joins repeated fields with ", ": a
 * request the fetch handler refuses with 415 would pass on a Node adapter on its first value. `req.headers` itself,
 * unless `rawHeaders` repeats Content-Type: then a copy holding every value joined, which the receiver refuses.
 *
 * @example
 * ```ts
 * createAdapter(receiver, options, { method: (req) => req.method, headers: nodeHeaders, … })
 * ```
 */
export function nodeHeaders(req: NodeRequestHeaders): HeadersInput {
  const raw = req.rawHeaders;
  if (raw === undefined || countContentTypes(raw) < 2) return req.headers;
  const values: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) if (isContentType(raw[i]!)) values.push(raw[i + 1]!);
  return { ...req.headers, 'content-type': values.join(', ') };
}

function countContentTypes(raw: readonly string[]): number {
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) if (isContentType(raw[i]!)) count += 1;
  return count;
}

// The length first: nearly every other header name is ruled out without a lower-casing.
function isContentType(name: string): boolean {
  return name.length === 12 && (name === 'content-type' || name.toLowerCase() === 'content-type');
}
