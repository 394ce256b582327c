/**
 * The `code` of a receiver's JSON answer (`{ "code" }` or `{ "error": { "code" } }`), kept only when it is short and
 * code-shaped: an endpoint's answer could quote anything, and what the sender and the local service record is shown
 * in test output and reports.
 *
 * @example
 * ```ts
 * answerCode(new TextEncoder().encode('{"error":{"code":"signature_mismatch","message":"…"}}')) // 'signature_mismatch'
 * ```
 */
export function answerCode(body: Uint8Array | ArrayBuffer): string | undefined {
  if (body.byteLength === 0 || body.byteLength > 4096) return undefined;
  try {
    const parsed: unknown = JSON.parse(new TextDecoder().decode(body));
    const answer =
      typeof parsed === 'object' && parsed !== null
        ? (parsed as { code?: unknown; error?: { code?: unknown } })
        : undefined;
    const value = typeof answer?.code === 'string' ? answer.code : answer?.error?.code;
    return typeof value === 'string' && /^[a-z][a-z0-9_]{0,63}$/.test(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What went wrong with a delivery that got no answer, as a kind only (`timeout`, `network error (ECONNREFUSED)`):
 * error messages can quote URLs or bodies, which must not end up in test logs or reports.
 *
 * @example
 * ```ts
 * describeDeliveryFailure(new DOMException('late', 'TimeoutError')) // 'timeout'
 * ```
 */
export function describeDeliveryFailure(error: unknown): string {
  if (error instanceof DOMException && (error.name === 'TimeoutError' || error.name === 'AbortError')) return 'timeout';
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause;
  return typeof cause?.code === 'string' ? `network error (${cause.code})` : 'network error';
}
