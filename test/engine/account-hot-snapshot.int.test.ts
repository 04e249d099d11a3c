/**
 * A hot account: thousands of reservations open at once, so its summary no longer fits one
 * append. Its books are still closed (in parts), a load still reads back only to the last
 * closing, decisions on the loaded state match a full replay, and the audit checks every
 * closing, parts joined.
 */
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSqliteEventStore } from '../../src/adapters/sqlite/event-store.js';
import { createSqliteViewStore } from '../../src/adapters/sqlite/view-store.js';
import { auditAccounts } from '../../src/audit/audit.js';
import { foldAccount, type AccountCommand, type AccountState } from '../../src/domain/account.js';
import { eventsBeforeClosing } from '../../src/domain/account-snapshot.js';
import { toDomainEvent } from '../../src/domain/recorded.js';
import { loadAccount } from '../../src/engine/accounts/account-load.js';
import { createAccountService, type AccountService } from '../../src/engine/accounts/account-service.js';
import { appendSize, MAX_APPEND_BYTES, type EventStore, type RecordedEvent } from '../../src/ports/event-store.js';
import type { ViewStore } from '../../src/ports/view-store.js';
import { accountsProjection } from '../../projections/accounts.js';
import { createProjectionRunner } from '../../projections/runner.js';
import { basis, meta } from '../support/account-fixture.js';
import { withOverrides } from '../support/event-store-overrides.js';
import { tempDir } from '../support/tmp.js';

const log = pino({ level: 'silent' });
const OPEN = 5000;
/** Reserved after the first OPEN: the books close at about 1,000, 2,000, 3,250, 5,000 and 7,750 events (eventsBeforeClosing), the last in parts. */
const MORE = 3000;
const ROUND = 250;
// Ids as long as the gateway's (prefixed base62), so 5,000 open reservations weigh over 1 MiB.
const pad = (i: number) => String(i).padStart(40, '0');
const reserve = (i: number): AccountCommand => ({
  type: 'ReserveQuota',
  data: { reservationId: `res_${pad(i)}`, taskId: `task_${pad(i)}`, amount: 3, model: 'image-model-v2', tokenId: `tok_${i % 7}`, basis },
});
const settle = (i: number): AccountCommand => ({ type: 'SettleQuota', data: { reservationId: `res_${pad(i)}`, actual: 2 } });

let dir: ReturnType<typeof tempDir>;
let store: EventStore;
let views: ViewStore;
let accounts: AccountService;

beforeEach(async () => {
  dir = tempDir();
  store = createSqliteEventStore({ path: `${dir.path}/events.sqlite` });
  views = createSqliteViewStore({ path: `${dir.path}/views.sqlite` });
  accounts = createAccountService({ events: store, log });
  await accounts.execute('a1', { type: 'OpenAccount', data: { accountId: 'a1', userId: 'u1', group: 'default' } }, meta());
  await accounts.execute('a1', { type: 'CreditQuota', data: { creditId: 'c1', amount: 1_000_000, note: 'top-up' } }, meta());
});
afterEach(async () => {
  await store.close();
  await views.close();
  dir.remove();
});

/** Runs `command(i)` for i in [from, to), ROUND at a time (each round one batch, mostly). */
async function inRounds(from: number, to: number, command: (i: number) => AccountCommand, service = accounts): Promise<void> {
  for (let start = from; start < to; start += ROUND) {
    const ids = Array.from({ length: Math.min(ROUND, to - start) }, (_, k) => start + k);
    await Promise.all(ids.map((i) => service.execute('a1', command(i), meta())));
  }
}

const closings = (stream: readonly RecordedEvent[]) =>
  stream.filter((e) => e.type === 'AccountSnapshotted' || (e.type === 'AccountSnapshotPartWritten' && (e.data as { summary?: unknown }).summary));

const figures = (s: AccountState) => ({
  balance: s.balance,
  reserved: s.reserved,
  usedQuota: s.usedQuota,
  open: [...s.openReservations].sort(([a], [b]) => a.localeCompare(b)),
  tokens: [...s.tokenUsage].sort(([a], [b]) => a.localeCompare(b)),
  closed: [...s.closedReservationIds],
  credits: [...s.seenCreditIds],
});

describe('a hot account with thousands of reservations open', () => {
  it(`${OPEN} open reservations: the books are still closed (in parts), and a load reads back only to the last closing`, async () => {
    await inRounds(0, OPEN, reserve);
    // More traffic while all of them are open: the books must close again above 7,000 open.
    await inRounds(OPEN, OPEN + MORE, reserve);
    await inRounds(0, 300, settle);

    const stream = await store.readStream('account-a1');
    const parts = stream.filter((e) => e.type === 'AccountSnapshotPartWritten');
    expect(parts.length).toBeGreaterThanOrEqual(2);
    for (const part of parts) expect(appendSize([part])).toBeLessThanOrEqual(MAX_APPEND_BYTES);
    // The last closing summarises more than 5,000 open reservations.
    const last = closings(stream).at(-1)!;
    expect(last.type).toBe('AccountSnapshotPartWritten');
    const full = foldAccount(stream.map(toDomainEvent).filter((e) => e !== undefined));
    expect(last.revision).toBeGreaterThan(stream.length - 1 - eventsBeforeClosing(full) - ROUND - parts.length);
    const lastParts = parts.filter((p) => (p.data as { snapshotId: string }).snapshotId === (last.data as { snapshotId: string }).snapshotId);
    const openInLast = lastParts.reduce((n, p) => n + (p.data as { openReservations: unknown[] }).openReservations.length, 0);
    expect(openInLast).toBeGreaterThan(OPEN);

    const loaded = await loadAccount(store, 'a1');
    // Bounded: the events since the last closing and that closing's parts, not the history.
    expect(loaded.eventsRead).toBeLessThanOrEqual(eventsBeforeClosing(full) + ROUND + lastParts.length);
    expect(figures(loaded.state)).toEqual(figures(full));
    expect(full.openReservations.size).toBe(OPEN + MORE - 300);
    expect(full.reserved).toBe(3 * (OPEN + MORE - 300));
    expect(full.balance).toBe(1_000_000 - 2 * 300);

    // Another instance, cold, decides on the loaded state.
    const other = createAccountService({ events: store, log });
    await other.execute('a1', settle(4999), meta());
    expect((await accounts.state('a1')).openReservations.has(`res_${pad(4999)}`)).toBe(false);

    // The audit joins the parts, checks each closing against its replay, and agrees with the view.
    const runner = createProjectionRunner({ events: store, views, projections: [accountsProjection], log });
    await runner.start();
    await runner.waitFor(await store.headPosition());
    await runner.stop();
    const report = await auditAccounts(store, views);
    expect(report.discrepancies).toEqual([]);
    expect(report.accounts.find((a) => a.accountId === 'a1')!.snapshots).toBe(closings(await store.readStream('account-a1')).length);
  }, 60_000);

  it('parts cut short by another writer are left behind; the books close at the next append, and every reader agrees', async () => {
    const other = createAccountService({ events: store, log });
    await other.state('a1');
    let cut = 0;
    const interrupted = withOverrides(store, {
      async append(stream, events, options) {
        if (cut === 0 && events[0]?.type === 'AccountSnapshotPartWritten' && (events[0].data as { summary?: unknown }).summary) {
          // Another instance's credit lands between the parts of a snapshot, before its last.
          cut++;
          await other.execute('a1', { type: 'CreditQuota', data: { creditId: 'between', amount: 1, note: '' } }, meta());
        }
        return store.append(stream, events, options);
      },
    });
    const hot = createAccountService({ events: interrupted, log });
    await inRounds(0, OPEN + MORE, reserve, hot);
    expect(cut).toBe(1);

    const stream = await store.readStream('account-a1');
    const parts = stream.filter((e) => e.type === 'AccountSnapshotPartWritten').map((e) => e.data as { snapshotId: string; summary?: unknown });
    const complete = new Set(parts.filter((p) => p.summary).map((p) => p.snapshotId));
    expect(complete.size).toBeGreaterThanOrEqual(1);
    const cutShort = new Set(parts.filter((p) => !complete.has(p.snapshotId)).map((p) => p.snapshotId));
    expect(cutShort.size).toBe(1);
    const full = foldAccount(stream.map(toDomainEvent).filter((e) => e !== undefined));
    expect(full.balance).toBe(1_000_001);
    expect(figures((await loadAccount(store, 'a1')).state)).toEqual(figures(full));
    // The cached reader caught up across the parts (and whatever was cut short).
    expect(figures(await other.state('a1'))).toEqual(figures(full));
    expect(figures(await hot.state('a1'))).toEqual(figures(full));

    const runner = createProjectionRunner({ events: store, views, projections: [accountsProjection], log });
    await runner.start();
    await runner.waitFor(await store.headPosition());
    await runner.stop();
    expect((await auditAccounts(store, views)).discrepancies).toEqual([]);
  }, 60_000);
});
