/**
 * Opens the SQLite file shared by the embedded adapters. WAL lets readers run while one writer
 * commits; `synchronous = FULL` fsyncs the WAL on every commit, so an acknowledged commit
 * survives power loss (the event store's group commit keeps that to one fsync per batch).
 * Stores whose contents can be rebuilt from the events (views) use `NORMAL`: still atomic and
 * consistent, but the last commits may be lost on power loss — and are then re-applied from
 * the older checkpoint, harmlessly under the position guards.
 */
import Database from 'better-sqlite3';

export type SqliteDatabase = Database.Database;

export interface OpenSqliteOptions {
  /** FULL (default): durable commits. NORMAL: for rebuildable data only. */
  synchronous?: 'FULL' | 'NORMAL';
}

export function openSqlite(path: string, options: OpenSqliteOptions = {}): SqliteDatabase {
  const db = new Database(path);
  try {
    // How long a writer waits for another connection's lock before SQLITE_BUSY.
    db.pragma('busy_timeout = 5000');
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${options.synchronous ?? 'FULL'}`);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}
