/** The `{success, message, data}` envelope of the user, token and admin routes. */
import { z } from 'zod';

export const ok = <T>(data: T, message = '') => ({ success: true as const, message, data });

export const envelope = <T extends z.ZodTypeAny>(data: T) => z.object({ success: z.literal(true), message: z.string(), data });

export const ApiError = z.object({ success: z.literal(false), message: z.string(), code: z.string() });
