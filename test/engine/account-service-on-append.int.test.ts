/**
 * ExecuteOptions.onAppend: a command that decided events hands its caller the store's pending
 * append, before it commits, so an append that must follow it can join the same group commit.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SqliteEventStore } from '../../src/adapters/sqlite/event-store.js';
import type { AccountService } from '../../src/engine/accounts/account-service.js';
import type { AppendResult } from '../../src/ports/event-store.js';
import { newEvents } from '../contract/event-store.fixtures.js';
import { basis, meta, openedAccount, type AccountFixture } from '../support/account-fixture.js';

const reserve = (reservationId: string, amount = 10) =>
  ({ type: 'ReserveQuota', data: { reservationId, taskId: `t-${reservationId}`, amount, model: 'm', basis } }) as const;

let fixture: AccountFixture;
let store: SqliteEventStore;
let accounts: AccountService;

beforeEach(async () => {
  fixture = await openedAccount();
  ({ store, accounts } = fixture);
  await accounts.execute('a1', { type: 'CreditQuota', data: { creditId: 'c1', amount: 15, note: 'top-up' } }, meta());
});
afterEach(() => fixture.close());

describe('account service: the pending append of a decision', () => {
  it('hands over the append before it commits; an append after it commits in the same transaction', async () => {
    const handed: Promise<AppendResult>[] = [];
    let following: Promise<AppendResult> | undefined;
    const before = store.groupCommitStats().transactions;
    const result = await accounts.execute('a1', reserve('r1'), meta(), {
      onAppend: (append) => {
        handed.push(append);
        following = store.append('task-t-r1', newEvents(1), { expectedRevision: 'no_stream', after: append });
      },
    });
    expect(handed).toHaveLength(1);
    expect((await handed[0]!).position).toBe(result.position);
    expect((await following!).position).toBe(result.position! + 1n);
    expect(store.groupCommitStats().transactions - before).toBe(1);
  });

  it('hands over nothing for a refused command or one that decides nothing', async () => {
    let calls = 0;
    const onAppend = () => void (calls += 1);
    await accounts.execute('a1', reserve('r1'), meta());
    // The same reservation again: already made, nothing decided.
    await accounts.execute('a1', reserve('r1'), meta(), { onAppend });
    await expect(accounts.execute('a1', reserve('r2'), meta(), { onAppend })).rejects.toMatchObject({ name: 'Refusal', code: 'insufficient_quota' });
    expect(calls).toBe(0);
  });

  it('a caller whose follow-up throws does not stop the decision from being appended', async () => {
    const result = await accounts.execute('a1', reserve('r1'), meta(), {
      onAppend: () => {
        throw new Error('the caller failed');
      },
    });
    expect(result.events.map((e) => e.type)).toEqual(['QuotaReserved']);
    expect((await store.readStream('account-a1')).at(-1)?.type).toBe('QuotaReserved');
  });
});
