/** The page tokens of `listStreams` (the `next` of a `StreamPage`) as the built-in stores write and read them. */
import { MAX_STREAM_ID_LENGTH } from './stream-store.js';

/**
 * The `next` of a `StreamPage` as the built-in stores write it: the last listed stream's activity and id, so
 * the next page starts strictly after it (keyset paging, stable while streams are written).
 *
 * @example
 * ```ts
 * const next = streamPageToken(last.activeAt, last.streamId)
 * ```
 */
export function streamPageToken(activeAt: number, streamId: string): string {
  return `${activeAt}:${streamId}`;
}

/**
 * Read a token made by {@link streamPageToken}; a RangeError for anything else.
 *
 * @example
 * ```ts
 * const { activeAt, streamId } = readStreamPageToken(options.after)
 * ```
 */
export function readStreamPageToken(token: string): { activeAt: number; streamId: string } {
  const match = /^(\d{1,16}):([\s\S]+)$/.exec(token);
  const activeAt = match ? Number(match[1]) : NaN;
  if (!match || !Number.isSafeInteger(activeAt) || match[2]!.length > MAX_STREAM_ID_LENGTH) {
    throw new RangeError('after must be the `next` of a previous page of the same store.');
  }
  return { activeAt, streamId: match[2]! };
}
