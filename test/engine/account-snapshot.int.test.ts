/**
 * Closing the books: the account service ends an append with an `AccountSnapshotted` every
 * `snapshotEvery` events, a load reads back only to the last one, and the state (and every
 * decision on it) is the same as folding the whole stream; the audit checks each snapshot.
 */
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSqliteEventStore } from '../../src/adapters/sqlite/event-store.js';
import { createSqliteViewStore } from '../../src/adapters/sqlite/view-store.js';
import { auditAccounts } from '../../src/audit/audit.js';
import { decideAccount, foldAccount, type AccountState } from '../../src/domain/account.js';
import { accountSnapshot } from '../../src/domain/account-snapshot.js';
import { splitSnapshot } from '../../src/domain/account-snapshot-parts.js';
import type { PriceBasis } from '../../src/domain/events.js';
import { toDomainEvent } from '../../src/domain/recorded.js';
import { loadAccount } from '../../src/engine/accounts/account-load.js';
import { createAccountService, type AccountService } from '../../src/engine/accounts/account-service.js';
import { toNewEvents } from '../../src/engine/commands/append.js';
import type { EventStore } from '../../src/ports/event-store.js';
import type { ViewStore } from '../../src/ports/view-store.js';
import { accountsProjection } from '../../projections/accounts.js';
import { createProjectionRunner } from '../../projections/runner.js';
import { tempDir } from '../support/tmp.js';
import { refused } from '../support/refused.js';

const basis: PriceBasis = { model: 'm', group: 'default', unit: 'request', unitPrice: 10, groupRatioPermille: 1000, units: 1 };
const meta = () => ({ at: new Date().toISOString() });
const log = pino({ level: 'silent' });
const EVERY = 50;
const RETAIN = 40;

let dir: ReturnType<typeof tempDir>;
let store: EventStore;
let views: ViewStore;
let accounts: AccountService;

beforeEach(async () => {
  dir = tempDir();
  store = createSqliteEventStore({ path: `${dir.path}/events.sqlite` });
  views = createSqliteViewStore({ path: `${dir.path}/views.sqlite` });
  accounts = createAccountService({ events: store, log, snapshotEvery: EVERY, retainClosedReservations: RETAIN });
  await accounts.execute('a1', { type: 'OpenAccount', data: { accountId: 'a1', userId: 'u1', group: 'default' } }, meta());
  await accounts.execute('a1', { type: 'CreditQuota', data: { creditId: 'c1', amount: 1_000_000, note: 'top-up' } }, meta());
});
afterEach(async () => {
  await store.close();
  await views.close();
  dir.remove();
});

/** `count` tasks reserved and settled (or released), in rounds decided as one batch each. */
async function settledTasks(from: number, count: number, service = accounts): Promise<void> {
  for (let round = from; round < from + count; round += 10) {
    const ids = Array.from({ length: Math.min(10, from + count - round) }, (_, i) => round + i);
    await Promise.all(
      ids.map((i) =>
        service.execute(
          'a1',
          { type: 'ReserveQuota', data: { reservationId: `r${i}`, taskId: `t${i}`, amount: 20, model: 'm', tokenId: 'k1', basis } },
          meta(),
        ),
      ),
    );
    await Promise.all(
      ids.map((i) =>
        i % 3 === 0
          ? service.execute('a1', { type: 'ReleaseQuota', data: { reservationId: `r${i}`, reason: 'failed' } }, meta())
          : service.execute('a1', { type: 'SettleQuota', data: { reservationId: `r${i}`, actual: 15 } }, meta()),
      ),
    );
  }
}

async function replayed(): Promise<AccountState> {
  return foldAccount((await store.readStream('account-a1')).map(toDomainEvent).filter((e) => e !== undefined));
}

const figures = (s: AccountState) => ({
  balance: s.balance,
  reserved: s.reserved,
  usedQuota: s.usedQuota,
  open: [...s.openReservations],
  tokens: [...s.tokenUsage],
  closed: [...s.closedReservationIds],
  credits: [...s.seenCreditIds],
});

describe('closing the books', () => {
  it('a snapshot then more events: a cold load reads back only to the snapshot and equals the full replay', async () => {
    await settledTasks(0, 300);
    // More events after the last snapshot: two reservations left open, one more settled.
    await accounts.execute('a1', { type: 'ReserveQuota', data: { reservationId: 'open1', taskId: 'o1', amount: 7, model: 'm', basis } }, meta());
    await accounts.execute('a1', { type: 'ReserveQuota', data: { reservationId: 'open2', taskId: 'o2', amount: 9, model: 'm', tokenId: 'k2', basis } }, meta());
    await settledTasks(300, 1);

    const stream = await store.readStream('account-a1');
    const snapshots = stream.filter((e) => e.type === 'AccountSnapshotted');
    expect(snapshots.length).toBeGreaterThanOrEqual(Math.floor(stream.length / (EVERY + 20)));
    expect(stream.at(-1)!.type).not.toBe('AccountSnapshotted');

    const loaded = await loadAccount(store, 'a1');
    expect(loaded.revision).toBe(stream.at(-1)!.revision);
    expect(loaded.eventsRead).toBeLessThanOrEqual(stream.length - snapshots.at(-1)!.revision);
    expect(loaded.eventsRead).toBeLessThan(2 * EVERY);
    const full = await replayed();
    expect(figures(loaded.state)).toEqual(figures(full));
    expect(full.balance).toBe(1_000_000 - 200 * 15);
    expect(full.reserved).toBe(16);

    // A second service (another instance, cold cache) decides on the loaded state.
    const other = createAccountService({ events: store, log, snapshotEvery: EVERY, retainClosedReservations: RETAIN });
    expect(figures(await other.state('a1'))).toEqual(figures(full));
    await other.execute('a1', { type: 'SettleQuota', data: { reservationId: 'open1', actual: 7 } }, meta());
    expect((await accounts.state('a1')).reserved).toBe(9);
  });

  it('decides alike from a load and from a full replay, recent and forgotten reservations included', async () => {
    await settledTasks(0, 300);
    const loaded = (await loadAccount(store, 'a1')).state;
    const full = await replayed();
    const settleRecent = { type: 'SettleQuota', data: { reservationId: 'r299', actual: 15 } } as const;
    expect(decideAccount(settleRecent, loaded)).toEqual([]);
    expect(decideAccount(settleRecent, full)).toEqual([]);
    // r1 was closed before the last snapshot kept only the newest closed ids: forgotten in both.
    expect(loaded.closedReservationIds.has('r1')).toBe(false);
    const settleForgotten = { type: 'SettleQuota', data: { reservationId: 'r1', actual: 15 } } as const;
    expect(() => decideAccount(settleForgotten, loaded)).toThrow(refused('internal', 'unknown_reservation'));
    expect(() => decideAccount(settleForgotten, full)).toThrow(refused('internal', 'unknown_reservation'));
    // The settler reads an unknown reservation as "nothing owed": a late retry charges nothing.
    await expect(accounts.execute('a1', settleForgotten, meta())).rejects.toEqual(refused('internal', 'unknown_reservation'));
    expect((await replayed()).balance).toBe(full.balance);
  });

  it('a cached service catches up across a snapshot written by another instance and keeps closing the books', async () => {
    await settledTasks(0, 30);
    const other = createAccountService({ events: store, log, snapshotEvery: EVERY, retainClosedReservations: RETAIN });
    await settledTasks(30, 60, other);
    await settledTasks(90, 60);
    const stream = await store.readStream('account-a1');
    const revisions = stream.filter((e) => e.type === 'AccountSnapshotted').map((e) => e.revision);
    // No run of more than EVERY + one batch without closing the books.
    for (let i = 1; i < revisions.length; i++) expect(revisions[i]! - revisions[i - 1]!).toBeLessThanOrEqual(EVERY + 21);
    expect(figures(await accounts.state('a1'))).toEqual(figures(await replayed()));
  });

  it('the audit replays every event, checks every snapshot, and agrees with the views to the unit', async () => {
    await settledTasks(0, 200);
    const runner = createProjectionRunner({ events: store, views, projections: [accountsProjection], log });
    await runner.start();
    await runner.waitFor(await store.headPosition());
    await runner.stop();

    const report = await auditAccounts(store, views);
    expect(report.discrepancies).toEqual([]);
    const audit = report.accounts.find((a) => a.accountId === 'a1')!;
    expect(audit.events).toBe((await store.readStream('account-a1')).length);
    expect(audit.snapshots).toBeGreaterThan(3);
    const loaded = (await loadAccount(store, 'a1')).state;
    expect(audit.replayed).toEqual({ balance: loaded.balance, reserved: loaded.reserved, usedQuota: loaded.usedQuota });
  });

  it('the audit names a snapshot that disagrees with its replay', async () => {
    await settledTasks(0, 20);
    const state = await accounts.state('a1');
    const forged = { ...accountSnapshot(state)!, balance: state.balance + 500 };
    await store.append('account-a1', toNewEvents([{ type: 'AccountSnapshotted', data: forged }], meta()));
    const report = await auditAccounts(store, views);
    const audit = report.accounts.find((a) => a.accountId === 'a1')!;
    expect(audit.differences).toContainEqual(expect.stringMatching(/^snapshot at revision \d+: balance: snapshot \d+, replay \d+$/));
  });

  it('parts cut short mean nothing; a last part without its parts: a load folds the whole stream, the audit names it', async () => {
    await settledTasks(0, 20);
    const state = await accounts.state('a1');
    const parts = splitSnapshot(accountSnapshot(state)!, 's1', 1000);
    expect(parts.length).toBeGreaterThanOrEqual(2);
    // An attempt another writer cut short: its first parts only, then more decisions.
    await store.append('account-a1', toNewEvents([{ type: 'AccountSnapshotPartWritten', data: parts[0]! }], meta()));
    await settledTasks(20, 5);
    let loaded = await loadAccount(store, 'a1');
    expect(figures(loaded.state)).toEqual(figures(await replayed()));

    // A last part whose parts are not before it (never written so by the service).
    await store.append('account-a1', toNewEvents([{ type: 'AccountSnapshotPartWritten', data: parts.at(-1)! }], meta()));
    await settledTasks(25, 2);
    loaded = await loadAccount(store, 'a1');
    expect(loaded.eventsRead).toBeGreaterThan((await store.readStream('account-a1')).length);
    expect(figures(loaded.state)).toEqual(figures(await replayed()));
    const report = await auditAccounts(store, views);
    const audit = report.accounts.find((a) => a.accountId === 'a1')!;
    expect(audit.differences).toContainEqual(expect.stringMatching(/^snapshot at revision \d+: parts: 1 of \d+ parts$/));
  });
});
