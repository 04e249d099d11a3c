/**
 * AppendOptions.after on the embedded store: an append that follows a queued append joins its
 * group commit, right behind it (one transaction, one fsync for both), and is applied only
 * when that one succeeded.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { prepareAppendBatch, type AppendJob } from '../../src/adapters/sqlite/append-batch.js';
import { openSqlite } from '../../src/adapters/sqlite/database.js';
import { EVENTS_SCHEMA } from '../../src/adapters/sqlite/event-rows.js';
import { createSqliteEventStore, type SqliteEventStore } from '../../src/adapters/sqlite/event-store.js';
import { PrecedingAppendFailedError, WrongExpectedRevisionError } from '../../src/ports/event-store.js';
import { tempDir } from '../support/tmp.js';
import { ids, newEvents } from './event-store.fixtures.js';

async function withStore<T>(run: (store: SqliteEventStore) => Promise<T>): Promise<T> {
  const dir = tempDir('sqlite-after-');
  const store = createSqliteEventStore({ path: join(dir.path, 'events.db') });
  try {
    return await run(store);
  } finally {
    await store.close();
    dir.remove();
  }
}

function failureOf(attempt: Promise<unknown>): Promise<unknown> {
  return attempt.then(
    () => undefined,
    (reason: unknown) => reason,
  );
}

describe('SQLite event store: an append after another', () => {
  it('commits the append and the one it follows in one transaction', async () => {
    await withStore(async (store) => {
      const reservation = store.append('account-1', newEvents(1), { expectedRevision: 'no_stream' });
      const task = store.append('task-1', newEvents(1), { expectedRevision: 'no_stream', after: reservation });
      const [reserved, opened] = await Promise.all([reservation, task]);
      expect(opened.position).toBe(reserved.position + 1n);
      expect(store.groupCommitStats()).toEqual({ transactions: 1, appends: 2 });
    });
  });

  it('fails the dependent append unwritten when the one it follows fails, in the same transaction as the others', async () => {
    await withStore(async (store) => {
      await store.append('account-1', newEvents(1));
      const before = store.groupCommitStats();
      const other = store.append('task-other', newEvents(1), { expectedRevision: 'no_stream' });
      const reservation = store.append('account-1', newEvents(1), { expectedRevision: 'no_stream' });
      const task = store.append('task-1', newEvents(1), { expectedRevision: 'no_stream', after: reservation });
      const following = store.append('task-1-next', newEvents(1), { after: task });

      expect(await failureOf(reservation)).toBeInstanceOf(WrongExpectedRevisionError);
      const taskError = await failureOf(task);
      expect(taskError).toBeInstanceOf(PrecedingAppendFailedError);
      expect((taskError as PrecedingAppendFailedError).precedingError).toBeInstanceOf(WrongExpectedRevisionError);
      // A chain fails link by link.
      expect(await failureOf(following)).toBeInstanceOf(PrecedingAppendFailedError);
      await other;
      expect(await store.readStream('task-1')).toEqual([]);
      expect(await store.readStream('task-1-next')).toEqual([]);
      expect(await store.readStream('account-1')).toHaveLength(1);
      const after = store.groupCommitStats();
      expect({ transactions: after.transactions - before.transactions, appends: after.appends - before.appends }).toEqual({ transactions: 1, appends: 4 });
    });
  });

  it('keeps the append it follows when the dependent one fails its own expectation', async () => {
    await withStore(async (store) => {
      await store.append('task-1', newEvents(1));
      const reservationEvents = newEvents(1);
      const reservation = store.append('account-1', reservationEvents, { expectedRevision: 'no_stream' });
      const task = store.append('task-1', newEvents(1), { expectedRevision: 'no_stream', after: reservation });
      expect(await failureOf(task)).toBeInstanceOf(WrongExpectedRevisionError);
      await reservation;
      expect(ids(await store.readStream('account-1'))).toEqual(ids(reservationEvents));
      expect(await store.readStream('task-1')).toHaveLength(1);
    });
  });

  it('waits for an append already taken for commit and commits after it, in the next transaction', async () => {
    await withStore(async (store) => {
      const reservation = store.append('account-1', newEvents(1));
      await reservation;
      const task = store.append('task-1', newEvents(1), { after: reservation });
      expect((await task).position).toBe((await reservation).position + 1n);
      expect(store.groupCommitStats()).toEqual({ transactions: 2, appends: 2 });
    });
  });

  it('waits for a promise it did not hand out, like any other store', async () => {
    await withStore(async (store) => {
      let release: () => void = () => undefined;
      const foreign = new Promise<{ nextExpectedRevision: number; position: bigint }>((resolve) => {
        release = () => resolve({ nextExpectedRevision: 0, position: 0n });
      });
      const task = store.append('task-1', newEvents(1), { after: foreign });
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await store.readStream('task-1')).toEqual([]);
      release();
      await task;
      expect(await store.readStream('task-1')).toHaveLength(1);
    });
  });
});

describe('SQLite append batch: a job after another', () => {
  function withBatch<T>(run: (appendBatch: ReturnType<typeof prepareAppendBatch>, count: () => number) => T): T {
    const dir = tempDir('sqlite-batch-');
    const db = openSqlite(join(dir.path, 'events.db'));
    try {
      db.exec(EVENTS_SCHEMA);
      const countRows = db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM events');
      return run(prepareAppendBatch(db), () => countRows.get()!.n);
    } finally {
      db.close();
      dir.remove();
    }
  }
  const job = (stream: string, after?: AppendJob): AppendJob => ({
    stream,
    events: [{ id: `${stream}-e1`, type: 'Tested', data: '{}', metadata: '{}' }],
    expected: 'no_stream',
    ...(after ? { after } : {}),
  });

  it('applies a job only after the one it follows succeeded in the same batch', () => {
    withBatch((appendBatch, count) => {
      const first = job('account-1');
      const { outcomes, wrote } = appendBatch([first, job('task-1', first)]);
      expect(outcomes.map((outcome) => outcome.ok)).toEqual([true, true]);
      expect(wrote).toBe(true);
      expect(count()).toBe(2);
    });
  });

  it('fails a job, unwritten, when the one it follows failed', () => {
    withBatch((appendBatch, count) => {
      appendBatch([job('account-1')]);
      const failing = { ...job('account-1'), events: [{ id: 'another', type: 'Tested', data: '{}', metadata: '{}' }] };
      const { outcomes, wrote } = appendBatch([failing, job('task-1', failing)]);
      expect(outcomes.map((outcome) => outcome.ok)).toEqual([false, false]);
      const second = outcomes[1]!;
      expect(second.ok ? undefined : second.error).toBeInstanceOf(PrecedingAppendFailedError);
      expect(wrote).toBe(false);
      expect(count()).toBe(1);
    });
  });

  it('fails a job whose preceding job is not earlier in the batch', () => {
    withBatch((appendBatch, count) => {
      const { outcomes } = appendBatch([job('task-1', job('account-1'))]);
      expect(outcomes[0]!.ok).toBe(false);
      expect(count()).toBe(0);
    });
  });
});
