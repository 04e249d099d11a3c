/** The `{success, message, data}` envelope of the user, token and admin routes. */
import { z } from 'zod';
import type { FindOptions, ViewFieldValue, ViewStore } from '../ports/view-store.js';
import type { RouteConfig } from './route-config.js';

export const ok = <T>(data: T, message = '') => ({ success: true as const, message, data });

export const envelope = <T extends z.ZodTypeAny>(data: T) => z.object({ success: z.literal(true), message: z.string(), data });

/** The answer of a list route (`listPage`): page `page` of `page_size` items, of `total` in all. */
export const pageOf = <T extends z.ZodTypeAny>(item: T) =>
  z.object({ items: z.array(item), total: z.number().int(), page: z.number().int(), page_size: z.number().int() });

/** The query of a list route: page `p` (from 0) of `size` items. */
export const pageQuery = (maxSize = 100, defaultSize = 20) => ({
  p: z.coerce.number().int().min(0).default(0),
  size: z.coerce.number().int().min(1).max(maxSize).default(defaultSize),
});

/** Page `p` of a view's documents that match `where`, with how many match in all. */
export async function listPage<D, R>(
  views: ViewStore,
  view: string,
  where: Readonly<Record<string, ViewFieldValue>>,
  order: Pick<FindOptions, 'sortBy' | 'desc'>,
  { p, size }: { p: number; size: number },
  record: (doc: D) => R,
) {
  const [docs, total] = await Promise.all([views.find<D>(view, where, { ...order, limit: size, offset: p * size }), views.count(view, where)]);
  return ok({ items: docs.map((d) => record(d.doc)), total, page: p, page_size: size });
}

/** Documents read from a view per step of `newestFirst`. */
const WALK_CHUNK = 1000;

/**
 * The documents of a view that match `where`, newest first (by `seq`), a chunk at a time, only
 * those `inside` a window; it ends at the view's end, or once the oldest document of a chunk is
 * `past` the window (a consumer that has enough stops reading sooner).
 */
export async function* newestFirst<D>(
  views: ViewStore,
  view: string,
  where: Readonly<Record<string, ViewFieldValue>>,
  inside: (doc: D) => boolean,
  past: (oldest: D) => boolean,
): AsyncGenerator<D[]> {
  for (let offset = 0; ; offset += WALK_CHUNK) {
    const chunk = await views.find<D>(view, where, { sortBy: 'seq', desc: true, limit: WALK_CHUNK, offset });
    const kept = chunk.map((d) => d.doc).filter(inside);
    if (kept.length > 0) yield kept;
    const oldest = chunk.at(-1)?.doc;
    if (chunk.length < WALK_CHUNK || (oldest !== undefined && past(oldest))) return;
  }
}

export const ApiError = z.object({ success: z.literal(false), message: z.string(), code: z.string() });

/** The `config` of every user, token and admin route: errors are `{success, message}` (route-config.ts). */
export const API_ROUTE: RouteConfig = { errorShape: 'api' };

type Camel<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<Camel<Tail>>}` : S;
type CamelFields<T> = { [K in keyof T as Camel<K & string>]?: Exclude<T[K], undefined> };

/** The fields of a request body that are set, renamed from the API's snake_case to the events' camelCase. */
export function camelFields<T extends object>(input: T): CamelFields<T> {
  const set = Object.entries(input).filter(([, value]) => value !== undefined);
  return Object.fromEntries(set.map(([key, value]) => [key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()), value])) as CamelFields<T>;
}
