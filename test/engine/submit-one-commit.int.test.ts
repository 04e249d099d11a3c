/**
 * A submit's two appends (the reservation on the account stream, TaskSubmitted on a new task
 * stream) reach the embedded store in one group commit: one transaction, one fsync, the task
 * never without its reservation. Each append's promise is watched as the store hands it out
 * (the wrapper returns it unchanged, so the store still recognises it as `after`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqliteEventStore } from '../../src/adapters/sqlite/event-store.js';
import { submitTask } from '../../src/engine/tasks/submit.js';
import { WrongExpectedRevisionError, type EventStore } from '../../src/ports/event-store.js';
import { withOverrides } from '../support/event-store-overrides.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { callerFor as callerForGateway, submitOf } from '../support/submit-request.js';

interface Committed {
  stream: string;
  /** The store's transaction count when the append settled: equal for appends of one transaction. */
  transaction: number;
  ok: boolean;
  /** Appended after another (a submit's task stream): what the dispatcher appends later is not. */
  followed: boolean;
}

let gw: TestGateway;
const committed: Committed[] = [];
/** Account streams whose next append is refused once, as if another writer had appended first. */
const conflictOnce = new Set<string>();

function watched(store: EventStore): EventStore {
  const sqlite = store as SqliteEventStore;
  return withOverrides(store, {
    append: (stream, events, options) => {
      if (conflictOnce.delete(stream)) return Promise.reject(new WrongExpectedRevisionError(stream, options?.expectedRevision ?? 'any', 0));
      const appending = store.append(stream, events, options);
      const record = (ok: boolean) =>
        committed.push({ stream, transaction: sqlite.groupCommitStats().transactions, ok, followed: options?.after !== undefined });
      appending.then(
        () => record(true),
        () => record(false),
      );
      return appending;
    },
  });
}

beforeAll(async () => {
  gw = await startGateway({}, { wrapEventStore: watched });
});
afterAll(() => gw.close());

const callerFor = (credit: number) => callerForGateway(gw, credit);

describe('a submit in one group commit', () => {
  it('commits the reservation and the task stream in the same transaction', async () => {
    const { caller, accountId } = await callerFor(100_000);
    committed.length = 0;
    const submitted = await submitTask(gw.gateway.deps, submitOf(caller));
    const reservation = committed.find((c) => c.stream === `account-${accountId}`);
    const task = committed.find((c) => c.stream === `task-${submitted.taskId}` && c.followed);
    expect(reservation?.ok).toBe(true);
    expect(task?.ok).toBe(true);
    expect(task?.transaction).toBe(reservation?.transaction);
    const [reserved] = await gw.gateway.deps.events.readStream(`account-${accountId}`, { direction: 'backwards', maxCount: 1 });
    expect(reserved).toMatchObject({ type: 'QuotaReserved', data: { reservationId: `res_${submitted.taskId}` } });
    expect(submitted.position).toBeGreaterThan(reserved!.position);
  });

  it('a reservation decided again after a conflict opens the task once, with the append that holds', async () => {
    const { caller, accountId } = await callerFor(100_000);
    committed.length = 0;
    conflictOnce.add(`account-${accountId}`);
    const submitted = await submitTask(gw.gateway.deps, submitOf(caller));
    expect(conflictOnce.size).toBe(0);
    const opened = (await gw.gateway.deps.events.readStream(`task-${submitted.taskId}`)).filter((e) => e.type === 'TaskSubmitted');
    expect(opened).toHaveLength(1);
    const reservations = (await gw.gateway.deps.events.readStream(`account-${accountId}`)).filter((e) => e.type === 'QuotaReserved');
    expect(reservations).toHaveLength(1);
    const reservation = committed.find((c) => c.stream === `account-${accountId}` && c.ok);
    // The append queued behind the refused attempt failed unwritten; the one behind the retry holds.
    const attempts = committed.filter((c) => c.stream === `task-${submitted.taskId}` && c.followed);
    expect(attempts.map((c) => c.ok)).toEqual([false, true]);
    const task = attempts.filter((c) => c.ok);
    expect(task[0]!.transaction).toBe(reservation?.transaction);
    expect((await gw.gateway.deps.accounts.state(accountId)).reserved).toBeGreaterThan(0);
  });

  it('a refused reservation opens no task stream', async () => {
    const { caller, accountId } = await callerFor(1);
    const head = await gw.gateway.deps.events.headPosition();
    await expect(submitTask(gw.gateway.deps, submitOf(caller))).rejects.toMatchObject({ code: 'insufficient_quota' });
    const since = await gw.gateway.deps.events.readAll({ after: head, streamPrefixes: ['task-', `account-${accountId}`] });
    expect(since.filter((e) => e.type === 'TaskSubmitted' && (e.data as { accountId?: string }).accountId === accountId)).toEqual([]);
  });
});
