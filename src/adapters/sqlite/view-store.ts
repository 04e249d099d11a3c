/**
 * Embedded ViewStore on a SQLite file. Every document carries the position of the last event
 * folded into it; a write at or below that position is ignored. Deletes leave a tombstone
 * (doc NULL, position kept) so a replayed older write cannot bring a deleted document back.
 * `commit` applies the writes and moves the checkpoint (forward only) in one transaction;
 * `bulkLoad` does the same with one unguarded INSERT OR REPLACE per document (rebuilds).
 */
import type Database from 'better-sqlite3';
import type { FindOptions, ProjectionWrites, ViewDocument, ViewFieldValue, ViewStore, ViewWrite } from '../../ports/view-store.js';
import { openSqlite } from './database.js';
import { memoCache } from '../../lib/memo-cache.js';
import { createHash } from 'node:crypto';
import { findSql, liveDocuments, orderClause, shapeIndexSql, whereClause } from './view-queries.js';

export interface SqliteViewStoreOptions {
  path: string;
}

const VIEWS_SCHEMA = `
CREATE TABLE IF NOT EXISTS view_documents (
  view     TEXT    NOT NULL,
  id       TEXT    NOT NULL,
  position INTEGER NOT NULL,
  doc      TEXT,
  PRIMARY KEY (view, id)
);
CREATE TABLE IF NOT EXISTS view_checkpoints (
  projection TEXT PRIMARY KEY,
  position   INTEGER NOT NULL
);
`;

interface DocumentRow {
  id: string;
  position: bigint;
  doc: string;
}

const LIVE = 'FROM view_documents WHERE view = ? AND doc IS NOT NULL';
/**
 * Indexes made on demand, one per view and query shape (as the MongoDB adapter makes them): the
 * shapes are the engine's own queries, a few dozen at most; past this many, queries go unindexed.
 */
const MAX_SHAPE_INDEXES = 64;

export function createSqliteViewStore(options: SqliteViewStoreOptions): ViewStore {
  // Views are rebuilt from the event store, so their commits need not wait for the disk.
  const db = openSqlite(options.path, { synchronous: 'NORMAL' });
  db.exec(VIEWS_SCHEMA);

  const getOne = db.prepare<[string, string], DocumentRow>(`SELECT id, position, doc ${LIVE} AND id = ?`).safeIntegers(true);
  const getSome = db.prepare<[string, string], DocumentRow>(`SELECT id, position, doc ${LIVE} AND id IN (SELECT value FROM json_each(?))`).safeIntegers(true);
  const upsert = db.prepare<[string, string, bigint, string | null]>(
    `INSERT INTO view_documents (view, id, position, doc) VALUES (?, ?, ?, ?)
     ON CONFLICT (view, id) DO UPDATE SET position = excluded.position, doc = excluded.doc
     WHERE excluded.position > view_documents.position`,
  );
  const moveCheckpoint = db.prepare<[string, bigint]>(
    `INSERT INTO view_checkpoints (projection, position) VALUES (?, ?)
     ON CONFLICT (projection) DO UPDATE SET position = excluded.position
     WHERE excluded.position > view_checkpoints.position`,
  );
  // A rebuild's bulk load: no position guard, whatever the view holds under the id is replaced.
  const replace = db.prepare<[string, string, bigint, string | null]>('INSERT OR REPLACE INTO view_documents (view, id, position, doc) VALUES (?, ?, ?, ?)');
  const readCheckpoint = db.prepare<[string], { position: bigint }>('SELECT position FROM view_checkpoints WHERE projection = ?').safeIntegers(true);
  const dropView = db.prepare<[string]>('DELETE FROM view_documents WHERE view = ?');
  const dropCheckpoint = db.prepare<[string]>('DELETE FROM view_checkpoints WHERE projection = ?');
  const pingStatement = db.prepare('SELECT 1');
  const findStatements = memoCache<string, Database.Statement<unknown[], DocumentRow>>(256);
  const countStatements = memoCache<string, Database.Statement<unknown[], { n: number }>>(256);
  const shapeIndexes = new Set<string>();

  /**
   * Periodic passes (expiry, callbacks due, tasks in flight) sort and filter on fields inside the
   * documents: without an index each pass reads and parses every document of the view. Gives the
   * index's name, or undefined when the shape has none (no fields, or past the cap).
   */
  function indexShape(view: string, expressions: readonly string[]): string | undefined {
    if (expressions.length === 0) return undefined;
    const name = `view_shape_${createHash('sha256').update(view).update('\u0000').update(expressions.join('\u0000')).digest('hex').slice(0, 16)}`;
    if (shapeIndexes.has(name)) return name;
    if (shapeIndexes.size >= MAX_SHAPE_INDEXES) return undefined;
    db.exec(shapeIndexSql(view, expressions, name));
    shapeIndexes.add(name);
    return name;
  }

  /** Applies writes with `statement` (guarded upsert for commits, unguarded replace for bulk loads) and moves the checkpoint. */
  const writesWith = (statement: Database.Statement<[string, string, bigint, string | null]>) =>
    db.transaction((projection: string, writes: readonly ViewWrite[], checkpoint: bigint | undefined): number => {
      let applied = 0;
      for (const write of writes) {
        const doc = write.doc === null ? null : JSON.stringify(write.doc);
        applied += statement.run(write.view, write.id, write.position, doc).changes;
      }
      if (checkpoint !== undefined) moveCheckpoint.run(projection, checkpoint);
      return applied;
    });
  const commitTransaction = writesWith(upsert);
  const commitAllTransaction = db.transaction((batch: readonly ProjectionWrites[], checkpoint: bigint): number =>
    batch.reduce((applied, { projection, writes }) => applied + commitTransaction(projection, writes, checkpoint), 0),
  );
  const loadTransaction = writesWith(replace);
  const resetTransaction = db.transaction((view: string, projection: string) => {
    dropView.run(view);
    dropCheckpoint.run(projection);
  });

  return {
    async get<T>(view: string, id: string) {
      const row = getOne.get(view, id);
      return row ? toDocument<T>(row) : undefined;
    },

    async getMany<T>(view: string, ids: readonly string[]) {
      if (ids.length === 0) return [];
      const byId = new Map(getSome.all(view, JSON.stringify(ids)).map((row) => [row.id, row]));
      const documents: ViewDocument<T>[] = [];
      for (const id of new Set(ids)) {
        const row = byId.get(id);
        if (row) documents.push(toDocument<T>(row));
      }
      return documents;
    },

    async find<T>(view: string, where: Readonly<Record<string, ViewFieldValue>>, findOptions: FindOptions = {}) {
      const filter = whereClause(where);
      const order = orderClause(findOptions);
      const statement = findStatements.getOrMake(`${view}\u0000${filter.shape}|${order.shape}`, () => {
        const index = indexShape(view, order.expression ? [...filter.expressions, order.expression] : filter.expressions);
        return db.prepare<unknown[], DocumentRow>(findSql(view, filter, order, index)).safeIntegers(true);
      });
      const limit = findOptions.limit === undefined ? -1 : Math.max(0, Math.trunc(findOptions.limit));
      const offset = Math.max(0, Math.trunc(findOptions.offset ?? 0));
      return statement.all(...filter.params, limit, offset).map((row) => toDocument<T>(row));
    },

    async count(view, where) {
      const filter = whereClause(where);
      // No index of its own: a find's index on the same fields serves it (its leading columns).
      const statement = countStatements.getOrMake(`${view}\u0000${filter.shape}`, () =>
        db.prepare<unknown[], { n: number }>(`SELECT COUNT(*) AS n ${liveDocuments(view)}${filter.sql}`),
      );
      return statement.get(...filter.params)?.n ?? 0;
    },

    async commit(projection, writes, checkpoint) {
      return commitTransaction.immediate(projection, writes, checkpoint);
    },

    async commitAll(batch, checkpoint) {
      // The inner transactions become savepoints of this one.
      return commitAllTransaction.immediate(batch, checkpoint);
    },

    async bulkLoad(projection, writes, checkpoint) {
      loadTransaction.immediate(projection, writes, checkpoint);
    },

    async getCheckpoint(projection) {
      return readCheckpoint.get(projection)?.position;
    },

    async reset(view, projection) {
      resetTransaction.immediate(view, projection);
    },

    async ping() {
      pingStatement.get();
    },

    async close() {
      if (db.open) db.close();
    },
  };
}

function toDocument<T>(row: DocumentRow): ViewDocument<T> {
  return { id: row.id, position: row.position, doc: JSON.parse(row.doc) as T };
}
