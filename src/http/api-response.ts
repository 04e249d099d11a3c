/** The `{success, message, data}` envelope of the user, token and admin routes. */
import { z } from 'zod';
import type { RouteConfig } from './route-config.js';

export const ok = <T>(data: T, message = '') => ({ success: true as const, message, data });

export const envelope = <T extends z.ZodTypeAny>(data: T) => z.object({ success: z.literal(true), message: z.string(), data });

export const ApiError = z.object({ success: z.literal(false), message: z.string(), code: z.string() });

/** The `config` of every user, token and admin route: errors are `{success, message}` (route-config.ts). */
export const API_ROUTE: RouteConfig = { errorShape: 'api' };
