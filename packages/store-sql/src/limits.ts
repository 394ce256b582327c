import { storeDurationMs } from '@kyb-webhooks/core/store';

/**
 * Longest event id the SQL stores accept (a longer one is rejected with a RangeError).
 *
 * @example
 * ```ts
 * if (eventId.length > MAX_EVENT_ID_LENGTH) throw new Error('not a KYB event id')
 * ```
 * Event ids are 26-character ULIDs; the limit leaves room for other id
 * schemes while keeping the primary key within every engine's index size, and an id that does not fit is refused
 * rather than truncated (a truncated id could collide with another event).
 */
export const MAX_EVENT_ID_LENGTH = 255;

export function checkEventId(eventId: string): void {
  if (typeof eventId !== 'string' || eventId.length === 0 || eventId.length > MAX_EVENT_ID_LENGTH) {
    throw new RangeError(`The event id must be a string of 1 to ${MAX_EVENT_ID_LENGTH} characters.`);
  }
}

/** A lease or retention in whole milliseconds, 1 to 100 years; a fraction is rounded up, never making it shorter. */
export const milliseconds = storeDurationMs;
