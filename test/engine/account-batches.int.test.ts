/**
 * The account service's appends under load on one account: a conflict with another writer is
 * caught up by reading only what that writer appended, and a batch of waiting commands is cut
 * into appends that each fit the store's limit, so no command is refused for the others' size.
 */
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { foldAccount, type AccountCommand } from '../../src/domain/account.js';
import { toDomainEvent } from '../../src/domain/recorded.js';
import { createAccountService, type AccountService } from '../../src/engine/accounts/account-service.js';
import { appendSize, EventTooLargeError, MAX_APPEND_BYTES, type EventStore } from '../../src/ports/event-store.js';
import { createSqliteViewStore } from '../../src/adapters/sqlite/view-store.js';
import { auditAccounts } from '../../src/audit/audit.js';
import { accountsProjection } from '../../projections/accounts.js';
import { createProjectionRunner } from '../../projections/runner.js';
import { basis, meta, openedAccount, type AccountFixture } from '../support/account-fixture.js';
import { tempDir } from '../support/tmp.js';
import { withOverrides } from '../support/event-store-overrides.js';

const log = pino({ level: 'silent' });
const reserve = (reservationId: string, amount = 1, taskId = `t-${reservationId}`): AccountCommand => ({
  type: 'ReserveQuota',
  data: { reservationId, taskId, amount, model: 'm', basis },
});

let fixture: AccountFixture;
let store: EventStore;

beforeEach(async () => {
  fixture = await openedAccount();
  store = fixture.store;
  await fixture.accounts.execute('a1', { type: 'CreditQuota', data: { creditId: 'c1', amount: 10_000_000, note: 'top-up' } }, meta());
});
afterEach(() => fixture.close());

/** The audit (what `npm run audit` runs) over the account view projected from the store: no discrepancy. */
async function expectAuditClean(): Promise<void> {
  const dir = tempDir();
  const views = createSqliteViewStore({ path: `${dir.path}/views.sqlite` });
  try {
    const runner = createProjectionRunner({ events: store, views, projections: [accountsProjection], log });
    await runner.start();
    await runner.waitFor(await store.headPosition());
    await runner.stop();
    const report = await auditAccounts(store, views, { accountId: 'a1' });
    expect(report.discrepancies).toEqual([]);
    expect(report.accounts).toHaveLength(1);
  } finally {
    await views.close();
    dir.remove();
  }
}

async function replayed() {
  return foldAccount((await store.readStream('account-a1')).map(toDomainEvent).filter((e) => e !== undefined));
}

describe('account service: a conflict is caught up incrementally', () => {
  it('another writer appends between the load and the append: only its event is read, and the command goes through', async () => {
    // 300 events on the account and no snapshot yet: a load reads them all.
    for (let round = 0; round < 30; round++) {
      await Promise.all(Array.from({ length: 10 }, (_, i) => fixture.accounts.execute('a1', reserve(`r${round}_${i}`), meta())));
    }
    const other = createAccountService({ events: store, log });
    let eventsRead = 0;
    let slipIn = false;
    const counted = withOverrides(store, {
      async readStream(stream, options) {
        const read = await store.readStream(stream, options);
        eventsRead += read.length;
        return read;
      },
      async append(stream, events, options) {
        if (slipIn) {
          // Another instance's reservation lands after this one loaded the account.
          slipIn = false;
          await other.execute('a1', reserve('other'), meta());
        }
        return store.append(stream, events, options);
      },
    });
    const accounts = createAccountService({ events: counted, log });
    await accounts.state('a1');
    expect(eventsRead).toBeGreaterThan(300);

    eventsRead = 0;
    slipIn = true;
    const result = await accounts.execute('a1', reserve('mine'), meta());
    expect(result.events.map((e) => e.type)).toEqual(['QuotaReserved']);
    expect(slipIn).toBe(false);
    // The other writer's one event, read once; a reload would read back over all 300.
    expect(eventsRead).toBe(1);
    const state = await accounts.state('a1');
    const full = await replayed();
    expect(state.reserved).toBe(302);
    expect([...state.openReservations.keys()].sort()).toEqual([...full.openReservations.keys()].sort());
    expect({ balance: state.balance, reserved: state.reserved, used: state.usedQuota }).toEqual({
      balance: full.balance,
      reserved: full.reserved,
      used: full.usedQuota,
    });
    await expectAuditClean();
  });

  it('a conflicted command is decided again on the caught-up state: what the other writer took is no longer available', async () => {
    const other = createAccountService({ events: store, log });
    let slipIn = true;
    const conflicted = withOverrides(store, {
      async append(stream, events, options) {
        if (slipIn) {
          slipIn = false;
          // The other writer takes almost all that is left.
          await other.execute('a1', reserve('big', 9_999_990), meta());
        }
        return store.append(stream, events, options);
      },
    });
    const accounts = createAccountService({ events: conflicted, log });
    await accounts.state('a1');
    const results = await Promise.allSettled([
      accounts.execute('a1', reserve('x1', 5), meta()),
      accounts.execute('a1', reserve('x2', 5), meta()),
      accounts.execute('a1', reserve('x3', 5), meta()),
    ]);
    // x1 went alone (first in its batch) and conflicted; decided again, 10 were left for it.
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
    const full = await replayed();
    expect(full.reserved).toBe(9_999_990 + 10);
    expect((await accounts.state('a1')).reserved).toBe(full.reserved);
  });
  it('a read of the state while a conflicting batch waits is not lost when the batch is undone', async () => {
    const other = createAccountService({ events: store, log });
    let reached!: () => void;
    const gate = new Promise<void>((resolve) => (reached = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let slipIn = true;
    const conflicted = withOverrides(store, {
      async append(stream, events, options) {
        if (slipIn) {
          slipIn = false;
          await other.execute('a1', { type: 'CreditQuota', data: { creditId: 'c2', amount: 500, note: 'meanwhile' } }, meta());
          reached();
          await released;
        }
        return store.append(stream, events, options);
      },
    });
    const accounts = createAccountService({ events: conflicted, log });
    await accounts.state('a1');
    const executing = accounts.execute('a1', reserve('x1', 5), meta());
    await gate;
    // A read while the batch's decision is folded in and its append is about to conflict.
    const reading = accounts.state('a1');
    await new Promise((resolve) => setTimeout(resolve, 20));
    release();
    await executing;
    await reading;
    const state = await accounts.state('a1');
    const full = await replayed();
    expect({ balance: state.balance, reserved: state.reserved }).toEqual({ balance: full.balance, reserved: full.reserved });
    expect(full.balance).toBe(10_000_500);
  });
});

describe('account service: appends cut to the store limit', () => {
  /** Each reservation's event is about 1.2 KB with this task id: 2,000 of them weigh more than 2 MiB. */
  const longTaskId = (i: number) => `t${i}-${'x'.repeat(1000)}`;

  it('2,000 reservations waiting together (over 2 MiB) all go through, in appends each under the limit', async () => {
    const sizes: number[] = [];
    const measured = withOverrides(store, {
      append(stream, events, options) {
        sizes.push(appendSize(events));
        return store.append(stream, events, options);
      },
    });
    const accounts: AccountService = createAccountService({ events: measured, log });
    await accounts.state('a1');
    const results = await Promise.allSettled(Array.from({ length: 2000 }, (_, i) => accounts.execute('a1', reserve(`r${i}`, 1, longTaskId(i)), meta())));
    expect(results.filter((r) => r.status === 'rejected').map((r) => String(r.reason))).toEqual([]);
    expect(sizes.reduce((a, b) => a + b, 0)).toBeGreaterThan(2 * MAX_APPEND_BYTES);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(MAX_APPEND_BYTES);
    expect(sizes.length).toBeLessThan(10);
    const full = await replayed();
    expect(full.openReservations.size).toBe(2000);
    expect(full.reserved).toBe(2000);
    await expectAuditClean();
  });

  it('a command too large on its own is refused, and only it', async () => {
    const accounts = createAccountService({ events: store, log });
    await accounts.state('a1');
    const results = await Promise.allSettled([
      accounts.execute('a1', reserve('before'), meta()),
      accounts.execute('a1', reserve('small1'), meta()),
      accounts.execute('a1', reserve('huge', 1, 'x'.repeat(MAX_APPEND_BYTES)), meta()),
      accounts.execute('a1', reserve('small2'), meta()),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect((results[2] as PromiseRejectedResult).reason).toBeInstanceOf(EventTooLargeError);
    expect([...(await replayed()).openReservations.keys()]).toEqual(['before', 'small1', 'small2']);
  });
});
