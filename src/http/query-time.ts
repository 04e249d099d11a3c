/** Times in query strings (`from`, `to`): what the list and export routes read alike. */
import { z } from 'zod';

/**
 * An ISO 8601 date or date-time, as the document states it (what Date.parse reads the same way
 * everywhere: a calendar date, a time to the minute, second or fraction, a zone or none). The
 * check is Date.parse itself, which also reads a few other spellings.
 */
const ISO_DATE_OR_TIME =
  '^[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])(?:T(?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9](?:\\.[0-9]{1,9})?)?(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])?)?$';

export const isoTime = z
  .string()
  .refine((v) => !Number.isNaN(Date.parse(v)), { message: 'must be a date or time (ISO 8601)' })
  .transform((v) => new Date(Date.parse(v)).toISOString())
  .meta({ pattern: ISO_DATE_OR_TIME, description: 'an ISO 8601 date or date-time, e.g. 2025-01-31 or 2025-01-31T12:00:00Z' });
