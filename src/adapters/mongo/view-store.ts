/**
 * ViewStore on MongoDB: one collection per view (`v.<view>`), documents
 * `{_id, position, doc, deleted?}` (position: a long, Decimal128 above 2^63-1; see
 * view-query.ts), checkpoints in `projection_checkpoints`.
 *
 * Every write is guarded by position, as the STYLE notes advise: first `$setOnInsert` with
 * upsert (creates the document if it is new, changes nothing otherwise), then an update whose
 * filter requires `position < new position`, without upsert — a conditional upsert against a
 * newer document would raise a duplicate-key error instead. A duplicate key (11000) on the
 * create means another writer created the document first; its guarded update then decides.
 * A delete writes a tombstone (`deleted: true`, position kept), so a replayed older write cannot
 * bring the document back; reads never see tombstones.
 *
 * `commit` is not one transaction across documents. The writes go first (one ordered bulk
 * write per view collection), the checkpoint moves after them (compare-and-set, forward
 * only). That is safe because every write is idempotent under its position guard: if the
 * process dies between the writes and the checkpoint, or a commit fails half-way, the runner
 * resumes from the old checkpoint and re-applies the same events, whose writes are then at or
 * below the stored positions and ignored; the checkpoint never passes a write that is not
 * stored. Readers may see part of a batch before the rest (eventually consistent views).
 *
 * `find`/`count` create an index for each query shape they see (equality paths, then the sort
 * path) in the background, at most `maxIndexesPerView` per collection, re-ensured every ten
 * minutes so a collection dropped by `reset` (here or in another process) gets them back.
 */
import { MongoBulkWriteError, MongoClient, MongoServerError, type AnyBulkWriteOperation, type Collection, type Filter, type WriteError } from 'mongodb';
import { escapeKeys, unescapeKeys } from './field-names.js';
import { commitEachInTurn, type FindOptions, type ViewDocument, type ViewFieldValue, type ViewStore, type ViewWrite } from '../../ports/view-store.js';
import {
  CHECKPOINTS,
  LIVE,
  fromStoredPosition,
  indexKeysFor,
  sortOf,
  toStoredPosition,
  viewCollectionName,
  whereFilter,
  type CheckpointRecord,
  type ViewRecord,
} from './view-query.js';
import { translateRejections } from '../translate-rejections.js';
import { unavailableOnConnectionFailure } from './connection-failure.js';
import { reconnectingAfterClose } from './reconnect.js';

export interface MongoViewStoreOptions {
  /** e.g. `mongodb://localhost:27017/?replicaSet=rs0` or `…/?directConnection=true`. */
  url: string;
  dbName: string;
  /** Upper bound of indexes created on demand per view collection. Default 16. */
  maxIndexesPerView?: number;
  /** Told when an on-demand index could not be created (queries still work, unindexed). */
  onIndexError?(error: unknown, collection: string, keys: readonly string[]): void;
}

const DUPLICATE_KEY = 11000;
const NAMESPACE_NOT_FOUND = 26;
const INDEX_RECHECK_MS = 10 * 60 * 1000;
/** Documents per insertMany of a bulk load: well under the 16 MiB message limit for view documents. */
const LOAD_CHUNK = 1000;

type Op<T extends object> = AnyBulkWriteOperation<T>;

export function createMongoViewStore(options: MongoViewStoreOptions): ViewStore {
  const client = new MongoClient(options.url);
  const db = client.db(options.dbName);
  const checkpoints = db.collection<CheckpointRecord>(CHECKPOINTS);
  const maxIndexes = options.maxIndexesPerView ?? 16;
  /** Index shapes ensured per collection, with when they were last ensured. */
  const ensured = new Map<string, Map<string, number>>();
  let closed = false;

  function assertOpen(): void {
    if (closed) throw new Error('view store is closed');
  }

  const views = (view: string): Collection<ViewRecord> => db.collection<ViewRecord>(viewCollectionName(view));

  function ensureIndex(collection: Collection<ViewRecord>, keys: readonly string[]): void {
    if (keys.length === 0) return;
    const shapes = ensured.get(collection.collectionName) ?? new Map<string, number>();
    ensured.set(collection.collectionName, shapes);
    const shape = keys.join('\u0000');
    const last = shapes.get(shape);
    if (last !== undefined && Date.now() - last < INDEX_RECHECK_MS) return;
    if (last === undefined && shapes.size >= maxIndexes) return;
    shapes.set(shape, Date.now());
    collection.createIndex(Object.fromEntries(keys.map((key) => [key, 1]))).catch((error: unknown) => {
      options.onIndexError?.(error, collection.collectionName, keys);
    });
  }

  async function moveCheckpoint(projection: string, checkpoint: bigint): Promise<void> {
    const position = toStoredPosition(checkpoint);
    await applyOrdered(checkpoints, [
      { updateOne: { filter: { _id: projection }, update: { $setOnInsert: { position } }, upsert: true } },
      { updateOne: { filter: { _id: projection, position: { $lt: position } }, update: { $set: { position } } } },
    ]);
  }

  /**
   * The writes of a commit or bulk load, grouped by view collection, each as what its collection
   * receives. Everything is validated and serialised first: a bad write fails before any document is touched.
   */
  function validatedWrites<T>(projection: string, writes: readonly ViewWrite[], checkpoint: bigint | undefined, serialise: (write: ViewWrite) => T[]) {
    assertOpen();
    requireProjection(projection);
    if (checkpoint !== undefined) toStoredPosition(checkpoint);
    const byView = new Map<string, { collection: Collection<ViewRecord>; items: T[] }>();
    for (const write of writes) {
      const collection = views(write.view);
      const entry = byView.get(collection.collectionName) ?? { collection, items: [] };
      byView.set(collection.collectionName, entry);
      entry.items.push(...serialise(write));
    }
    return [...byView.values()];
  }

  async function commit(projection: string, writes: readonly ViewWrite[], checkpoint: bigint | undefined): Promise<number> {
    const byView = validatedWrites(projection, writes, checkpoint, guardedWrite);
    const counts = await Promise.all(byView.map(({ collection, items }) => applyOrdered(collection, items)));
    if (checkpoint !== undefined) await moveCheckpoint(projection, checkpoint);
    return counts.reduce((sum, n) => sum + n, 0);
  }

  const store: ViewStore = {
    async get<T>(view: string, id: string) {
      assertOpen();
      const record = await views(view).findOne({ _id: id, ...LIVE } as Filter<ViewRecord>);
      return record ? toDocument<T>(record) : undefined;
    },

    async getMany<T>(view: string, ids: readonly string[]) {
      assertOpen();
      const unique = [...new Set(ids)];
      if (unique.length === 0) return [];
      const records = await views(view)
        .find({ _id: { $in: unique }, ...LIVE } as Filter<ViewRecord>)
        .toArray();
      const byId = new Map(records.map((record) => [record._id, record]));
      return unique.flatMap((id) => {
        const record = byId.get(id);
        return record ? [toDocument<T>(record)] : [];
      });
    },

    async find<T>(view: string, where: Readonly<Record<string, ViewFieldValue>>, findOptions: FindOptions = {}) {
      assertOpen();
      const collection = views(view);
      const filter = whereFilter(where) as Filter<ViewRecord>;
      const sort = sortOf(findOptions);
      const limit = findOptions.limit === undefined ? undefined : Math.max(0, Math.trunc(findOptions.limit));
      const offset = Math.max(0, Math.trunc(findOptions.offset ?? 0));
      if (limit === 0) return [];
      ensureIndex(collection, indexKeysFor(where, findOptions.sortBy));
      let cursor = collection.find(filter).sort(sort).skip(offset);
      if (limit !== undefined) cursor = cursor.limit(limit);
      return (await cursor.toArray()).map((record) => toDocument<T>(record));
    },

    async count(view, where) {
      assertOpen();
      const collection = views(view);
      const filter = whereFilter(where) as Filter<ViewRecord>;
      ensureIndex(collection, indexKeysFor(where, undefined));
      return collection.countDocuments(filter);
    },

    commit,

    // No transaction across collections here: each projection's writes, then its checkpoint, in turn.
    commitAll: (batch, checkpoint) => commitEachInTurn(commit, batch, checkpoint),

    async bulkLoad(projection, writes, checkpoint) {
      for (const { collection, items } of validatedWrites(projection, writes, checkpoint, (write) => [storedRecord(write)])) {
        for (let start = 0; start < items.length; start += LOAD_CHUNK) await insertOrReplace(collection, items.slice(start, start + LOAD_CHUNK));
      }
      if (checkpoint !== undefined) await moveCheckpoint(projection, checkpoint);
    },

    async getCheckpoint(projection) {
      assertOpen();
      const record = await checkpoints.findOne({ _id: requireProjection(projection) });
      return record ? fromStoredPosition(record.position) : undefined;
    },

    async reset(view, projection) {
      assertOpen();
      const collection = views(view);
      try {
        await collection.drop();
      } catch (error) {
        if (!(error instanceof MongoServerError && error.code === NAMESPACE_NOT_FOUND)) throw error;
      }
      ensured.delete(collection.collectionName);
      await checkpoints.deleteOne({ _id: requireProjection(projection) });
    },

    async ping() {
      assertOpen();
      await db.command({ ping: 1 });
    },

    async close() {
      if (closed) return;
      closed = true;
      await client.close();
    },
  };
  // A dropped connection or an unreachable server is StoreUnavailableError, whatever the call.
  return translateRejections(reconnectingAfterClose(store, client), unavailableOnConnectionFailure);
}

/** The two operations of one position-guarded write: create if new, then update if newer. */
function guardedWrite(write: ViewWrite): Op<ViewRecord>[] {
  const { _id, ...stored } = storedRecord(write);
  const filterNewer = { _id, position: { $lt: stored.position } };
  // A live document replacing a tombstone drops its `deleted` mark.
  const update = stored.deleted ? { $set: stored } : { $set: stored, $unset: { deleted: '' as const } };
  return [{ updateOne: { filter: { _id }, update: { $setOnInsert: stored }, upsert: true } }, { updateOne: { filter: filterNewer, update } }];
}

/** A write as stored: a live document, or the tombstone of a delete (checked and serialised first). */
function storedRecord(write: ViewWrite): ViewRecord {
  if (typeof write.id !== 'string' || write.id.length === 0) throw new TypeError('view document id must be a non-empty string');
  const position = toStoredPosition(write.position);
  if (write.doc === null) return { _id: write.id, position, doc: null, deleted: true };
  return { _id: write.id, position, doc: jsonDocument(write.doc) };
}

/**
 * One unordered insertMany (the view was emptied, so nearly every document is new); the few a
 * rebuild wrote before (it writes a document again after folding more into it) fail with a
 * duplicate key and are replaced, unguarded, in one unordered bulk write.
 */
async function insertOrReplace(collection: Collection<ViewRecord>, records: readonly ViewRecord[]): Promise<void> {
  try {
    await collection.insertMany([...records], { ordered: false });
  } catch (error) {
    if (!(error instanceof MongoBulkWriteError)) throw error;
    const writeErrors = (Array.isArray(error.writeErrors) ? error.writeErrors : [error.writeErrors]) as readonly WriteError[];
    if (writeErrors.length === 0 || writeErrors.some((e) => e.code !== DUPLICATE_KEY)) throw error;
    const again = writeErrors.map((e) => records[e.index]!);
    await collection.bulkWrite(
      again.map(({ _id, ...replacement }) => ({ replaceOne: { filter: { _id }, replacement, upsert: true } })),
      { ordered: false },
    );
  }
}

/**
 * Runs guarded operations in order and counts the applied ones: an upsert that inserted, or an
 * update that changed a document (a `$setOnInsert` that found the document changes nothing,
 * and an applied guarded update always changes the position). A duplicate key means the
 * document was created concurrently: that operation counts as done and the rest continue.
 */
async function applyOrdered<T extends { _id: string }>(collection: Collection<T>, ops: readonly Op<T>[]): Promise<number> {
  let applied = 0;
  let start = 0;
  for (let attempt = 0; start < ops.length; attempt++) {
    try {
      const result = await collection.bulkWrite(ops.slice(start), { ordered: true });
      return applied + result.upsertedCount + result.modifiedCount;
    } catch (error) {
      if (!(error instanceof MongoBulkWriteError) || attempt >= 10) throw error;
      // Array.isArray cannot narrow the driver's `T | ReadonlyArray<T>`: name the element type.
      const writeErrors = (Array.isArray(error.writeErrors) ? error.writeErrors : [error.writeErrors]) as readonly WriteError[];
      const first = writeErrors[0];
      if (!first || first.code !== DUPLICATE_KEY) throw error;
      applied += error.result.upsertedCount + error.result.modifiedCount;
      start += first.index + 1;
    }
  }
  return applied;
}

function requireProjection(projection: string): string {
  if (typeof projection !== 'string' || projection.length === 0) throw new TypeError('projection name must be a non-empty string');
  return projection;
}

/** The document as JSON would keep it (as the SQLite store does): undefined fields dropped; keys escaped (field-names.ts). */
function jsonDocument(doc: unknown): unknown {
  const text = JSON.stringify(doc);
  if (text === undefined) throw new TypeError('a view document must be a JSON value (null deletes)');
  return escapeKeys(JSON.parse(text));
}

function toDocument<T>(record: ViewRecord): ViewDocument<T> {
  return { id: record._id, position: fromStoredPosition(record.position), doc: unescapeKeys(record.doc) as T };
}
