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
    useWal(db);
    db.pragma(`synchronous = ${options.synchronous ?? 'FULL'}`);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/** How long a start waits for another process converting a fresh file to WAL. */
const WAL_SWITCH_WAIT_MS = 5000;
const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Switching a fresh file to WAL needs the file's exclusive lock, and SQLite answers SQLITE_BUSY
 * at once, without its busy handler, when another connection is doing the same (the two parts
 * of PROCESSES=2 open the same fresh files together). The mode is stored in the file, so the
 * wait ends as soon as the other process has switched it; opening stays synchronous, hence the
 * blocking pause between tries (at start only).
 */
function useWal(db: SqliteDatabase): void {
  const deadline = Date.now() + WAL_SWITCH_WAIT_MS;
  for (;;) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'SQLITE_BUSY' || Date.now() >= deadline) throw error;
      Atomics.wait(pause, 0, 0, 10);
    }
  }
}
