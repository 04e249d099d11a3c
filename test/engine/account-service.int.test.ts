import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { foldAccount } from '../../src/domain/account.js';
import { toDomainEvent } from '../../src/domain/recorded.js';
import { createAccountService, type AccountService } from '../../src/engine/accounts/account-service.js';
import type { EventStore } from '../../src/ports/event-store.js';
import { basis, meta, openedAccount, type AccountFixture } from '../support/account-fixture.js';

let fixture: AccountFixture;
let store: EventStore;
let accounts: AccountService;

beforeEach(async () => {
  fixture = await openedAccount();
  ({ store, accounts } = fixture);
});
afterEach(() => fixture.close());

async function replayed(accountId: string) {
  const events = await store.readStream(`account-${accountId}`);
  return foldAccount(events.map(toDomainEvent).filter((e) => e !== undefined));
}

describe('account service', () => {
  it('200 concurrent reservations against a balance for 100: exactly 100 succeed and the ledger balances', async () => {
    await accounts.execute('a1', { type: 'CreditQuota', data: { creditId: 'c1', amount: 1000, note: 'top-up' } }, meta());
    const results = await Promise.allSettled(
      Array.from({ length: 200 }, (_, i) =>
        accounts.execute('a1', { type: 'ReserveQuota', data: { reservationId: `r${i}`, taskId: `t${i}`, amount: 10, model: 'm', basis } }, meta()),
      ),
    );
    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.filter((r) => r.status === 'rejected');
    expect(won).toHaveLength(100);
    expect(lost).toHaveLength(100);
    for (const r of lost) expect(r.reason).toMatchObject({ name: 'Refusal', code: 'insufficient_quota' });
    const state = await replayed('a1');
    expect(state.balance).toBe(1000);
    expect(state.reserved).toBe(1000);
    expect(state.openReservations.size).toBe(100);
  });

  it('settles and releases concurrently without losing a unit, and a second settle charges nothing', async () => {
    await accounts.execute('a1', { type: 'CreditQuota', data: { creditId: 'c1', amount: 1000, note: 'top-up' } }, meta());
    await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        accounts.execute('a1', { type: 'ReserveQuota', data: { reservationId: `r${i}`, taskId: `t${i}`, amount: 20, model: 'm', basis } }, meta()),
      ),
    );
    await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        i % 2 === 0
          ? accounts.execute('a1', { type: 'SettleQuota', data: { reservationId: `r${i}`, actual: 15 } }, meta())
          : accounts.execute('a1', { type: 'ReleaseQuota', data: { reservationId: `r${i}`, reason: 'failed' } }, meta()),
      ),
    );
    const again = await accounts.execute('a1', { type: 'SettleQuota', data: { reservationId: 'r0', actual: 15 } }, meta());
    expect(again.events).toEqual([]);
    const state = await replayed('a1');
    expect(state.balance).toBe(1000 - 25 * 15);
    expect(state.reserved).toBe(0);
  });

  it('two services on one store (two instances) never overdraw: conflicts are decided again', async () => {
    const other = createAccountService({ events: store, log: pino({ level: 'silent' }) });
    await accounts.execute('a1', { type: 'CreditQuota', data: { creditId: 'c1', amount: 100, note: 'top-up' } }, meta());
    const results = await Promise.allSettled(
      Array.from({ length: 40 }, (_, i) =>
        (i % 2 ? other : accounts).execute(
          'a1',
          { type: 'ReserveQuota', data: { reservationId: `r${i}`, taskId: `t${i}`, amount: 10, model: 'm', basis } },
          meta(),
        ),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(10);
    const state = await replayed('a1');
    expect(state.reserved).toBe(100);
    expect(state.balance - state.reserved).toBe(0);
  });
});
