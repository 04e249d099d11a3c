/**
 * ViewStore port: documents of projected views, each guarded by the global position of the
 * last event applied to it, plus one checkpoint per projection.
 */
export type ViewFieldValue = string | number | boolean | null;

export interface ViewDocument<T = unknown> {
  id: string;
  /** Global position of the last event folded into this document. */
  position: bigint;
  doc: T;
}

export interface FindOptions {
  limit?: number;
  offset?: number;
  /** Sort by a top-level field of the document (dot paths allowed), ascending unless desc. */
  sortBy?: string;
  desc?: boolean;
}

/** One write of a projection batch: `doc: null` deletes the document. */
export interface ViewWrite<T = unknown> {
  view: string;
  id: string;
  position: bigint;
  doc: T | null;
}

/** One projection's writes in a `commitAll`. */
export interface ProjectionWrites {
  projection: string;
  writes: readonly ViewWrite[];
}

export interface ViewStore {
  get<T>(view: string, id: string): Promise<ViewDocument<T> | undefined>;
  getMany<T>(view: string, ids: readonly string[]): Promise<ViewDocument<T>[]>;
  /**
   * Documents whose fields equal every value of `where` (keys are dot paths into the doc).
   * Indexed by the adapter as it sees fit.
   */
  find<T>(view: string, where: Readonly<Record<string, ViewFieldValue>>, options?: FindOptions): Promise<ViewDocument<T>[]>;
  count(view: string, where: Readonly<Record<string, ViewFieldValue>>): Promise<number>;
  /**
   * Applies writes and moves the projection's checkpoint in one step where the backend allows
   * (SQLite: one transaction). A write whose position is at or below the stored document's
   * position is ignored. The checkpoint only moves forward (compare-and-set).
   * Returns how many writes were applied.
   */
  commit(projection: string, writes: readonly ViewWrite[], checkpoint: bigint | undefined): Promise<number>;
  /**
   * `commit` of several projections at once, each one's checkpoint moved to `checkpoint`: one
   * step where the backend allows (SQLite: one transaction, one WAL write of each page however
   * many projections touch it), one `commit` per projection in order elsewhere. What the
   * projection runner writes per batch of events. Returns how many writes were applied.
   */
  commitAll(batch: readonly ProjectionWrites[], checkpoint: bigint): Promise<number>;
  /**
   * Bulk load for a rebuild (src/audit/rebuild.ts) into views it emptied with `reset`: each
   * write replaces whatever the view holds under its id, without a position guard (the rebuild
   * folded every document to its newest position itself); `doc: null` stores the same tombstone
   * `commit` leaves. Then moves the checkpoint like `commit` does. Far cheaper per document than
   * `commit`; never use it on views a runner is writing.
   */
  bulkLoad(projection: string, writes: readonly ViewWrite[], checkpoint: bigint | undefined): Promise<void>;
  getCheckpoint(projection: string): Promise<bigint | undefined>;
  /** Drops every document of a view and the given projection's checkpoint (rebuilds). */
  reset(view: string, projection: string): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * `commitAll` where the backend has no transaction across views (MongoDB): one `commit` per
 * projection, in the batch's order, each moving its own checkpoint. A crash between two leaves
 * one view ahead of another until the projector folds the one behind on from its checkpoint.
 */
export async function commitEachInTurn(commit: ViewStore['commit'], batch: readonly ProjectionWrites[], checkpoint: bigint): Promise<number> {
  let applied = 0;
  for (const { projection, writes } of batch) applied += await commit(projection, writes, checkpoint);
  return applied;
}
