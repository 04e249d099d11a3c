/** An account service on a fresh SQLite store with account `a1` opened: the setup of the account service's tests. */
import { pino } from 'pino';
import { createSqliteEventStore, type SqliteEventStore } from '../../src/adapters/sqlite/event-store.js';
import type { PriceBasis } from '../../src/domain/events.js';
import { createAccountService, type AccountService } from '../../src/engine/accounts/account-service.js';
import { tempDir } from './tmp.js';

export const basis: PriceBasis = { model: 'm', group: 'default', unit: 'request', unitPrice: 10, groupRatioPermille: 1000, units: 1 };
export const meta = () => ({ at: new Date().toISOString() });

export interface AccountFixture {
  store: SqliteEventStore;
  accounts: AccountService;
  close(): Promise<void>;
}

export async function openedAccount(): Promise<AccountFixture> {
  const dir = tempDir();
  const store = createSqliteEventStore({ path: `${dir.path}/events.sqlite` });
  const accounts = createAccountService({ events: store, log: pino({ level: 'silent' }) });
  await accounts.execute('a1', { type: 'OpenAccount', data: { accountId: 'a1', userId: 'u1', group: 'default' } }, meta());
  return {
    store,
    accounts,
    async close() {
      await store.close();
      dir.remove();
    },
  };
}
