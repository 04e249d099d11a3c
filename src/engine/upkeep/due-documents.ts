/**
 * The documents a periodic pass works on: a view's, oldest first, as long as they are due (an
 * expiry passed, a deadline near, a grace period over). Most passes find nothing due, and then
 * read one document instead of a page: the view's index (sorted by the field) serves both reads.
 */
import type { ViewDocument, ViewFieldValue, ViewStore } from '../../ports/view-store.js';

export async function dueDocuments<T>(
  views: ViewStore,
  view: string,
  where: Readonly<Record<string, ViewFieldValue>>,
  by: { sortBy: string; limit: number },
  due: (doc: T) => boolean,
): Promise<ViewDocument<T>[]> {
  const [oldest] = await views.find<T>(view, where, { sortBy: by.sortBy, limit: 1 });
  if (!oldest || !due(oldest.doc)) return [];
  const page = await views.find<T>(view, where, by);
  const end = page.findIndex((d) => !due(d.doc));
  return end === -1 ? page : page.slice(0, end);
}
