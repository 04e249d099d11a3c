/**
 * The in-process bus's durable log: one SQLite file (better-sqlite3, WAL) holding every
 * published message by (topic, partition, offset) and every consumer group's committed offset.
 * A committed offset is the next offset to read, as in Kafka. Offsets start at 0 per partition.
 */
import type { BusMessage } from '../../ports/bus.js';
import { openSqlite } from '../sqlite/database.js';

export interface LoggedMessage extends BusMessage {
  partition: number;
  offset: number;
}

export interface BusLog {
  /** Appends in one transaction; returns the messages with their partition and offset. */
  append(topic: string, messages: ReadonlyArray<BusMessage & { partition: number }>): LoggedMessage[];
  read(topic: string, partition: number, fromOffset: number, limit: number): LoggedMessage[];
  /** The offset the next appended message of the partition gets. */
  endOffset(topic: string, partition: number): number;
  committed(groupId: string, topic: string, partition: number): number | undefined;
  commit(groupId: string, topic: string, partition: number, nextOffset: number): void;
  ping(): void;
  close(): void;
}

interface MessageRow {
  offset_no: number;
  partition_no: number;
  id: string;
  msg_key: string;
  value: string;
  headers: string | null;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS bus_messages (
  topic        TEXT    NOT NULL,
  partition_no INTEGER NOT NULL,
  offset_no    INTEGER NOT NULL,
  id           TEXT    NOT NULL,
  msg_key      TEXT    NOT NULL,
  value        TEXT    NOT NULL,
  headers      TEXT,
  PRIMARY KEY (topic, partition_no, offset_no)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS bus_offsets (
  group_id     TEXT    NOT NULL,
  topic        TEXT    NOT NULL,
  partition_no INTEGER NOT NULL,
  next_offset  INTEGER NOT NULL,
  PRIMARY KEY (group_id, topic, partition_no)
) WITHOUT ROWID;
`;

function toLogged(row: MessageRow): LoggedMessage {
  const message: LoggedMessage = {
    id: row.id,
    key: row.msg_key,
    value: row.value,
    partition: row.partition_no,
    offset: row.offset_no,
  };
  if (row.headers !== null) message.headers = JSON.parse(row.headers) as Record<string, string>;
  return message;
}

export function openBusLog(path: string): BusLog {
  const db = openSqlite(path);
  db.exec(SCHEMA);

  const endStmt = db.prepare<[string, number], { next: number }>(
    'SELECT COALESCE(MAX(offset_no) + 1, 0) AS next FROM bus_messages WHERE topic = ? AND partition_no = ?',
  );
  const insertStmt = db.prepare('INSERT INTO bus_messages (topic, partition_no, offset_no, id, msg_key, value, headers) VALUES (?, ?, ?, ?, ?, ?, ?)');
  const readStmt = db.prepare<[string, number, number, number], MessageRow>(
    `SELECT partition_no, offset_no, id, msg_key, value, headers FROM bus_messages
     WHERE topic = ? AND partition_no = ? AND offset_no >= ? ORDER BY offset_no LIMIT ?`,
  );
  const committedStmt = db.prepare<[string, string, number], { next_offset: number }>(
    'SELECT next_offset FROM bus_offsets WHERE group_id = ? AND topic = ? AND partition_no = ?',
  );
  const commitStmt = db.prepare(
    `INSERT INTO bus_offsets (group_id, topic, partition_no, next_offset) VALUES (?, ?, ?, ?)
     ON CONFLICT (group_id, topic, partition_no) DO UPDATE SET next_offset = excluded.next_offset`,
  );
  const pingStmt = db.prepare('SELECT 1');

  const endOffset = (topic: string, partition: number): number => endStmt.get(topic, partition)?.next ?? 0;

  const appendTx = db.transaction((topic: string, messages: ReadonlyArray<BusMessage & { partition: number }>): LoggedMessage[] => {
    const next = new Map<number, number>();
    return messages.map((m) => {
      const offset = next.get(m.partition) ?? endOffset(topic, m.partition);
      next.set(m.partition, offset + 1);
      const headers = m.headers === undefined ? null : JSON.stringify(m.headers);
      insertStmt.run(topic, m.partition, offset, m.id, m.key, m.value, headers);
      const logged: LoggedMessage = { id: m.id, key: m.key, value: m.value, partition: m.partition, offset };
      if (m.headers !== undefined) logged.headers = { ...m.headers };
      return logged;
    });
  });

  return {
    append: (topic, messages) => appendTx(topic, messages),
    read: (topic, partition, fromOffset, limit) => readStmt.all(topic, partition, fromOffset, limit).map(toLogged),
    endOffset,
    committed: (groupId, topic, partition) => committedStmt.get(groupId, topic, partition)?.next_offset,
    commit: (groupId, topic, partition, nextOffset) => {
      commitStmt.run(groupId, topic, partition, nextOffset);
    },
    ping: () => {
      pingStmt.get();
    },
    close: () => {
      db.close();
    },
  };
}
