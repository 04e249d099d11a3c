import { expect } from 'vitest';
import { foldAccount } from '../../src/domain/account.js';
import { toDomainEvent } from '../../src/domain/recorded.js';
import type { AccountDoc } from '../../projections/accounts.js';
import type { LedgerEntry } from '../../projections/ledger.js';
import type { TestGateway } from './gateway.js';

/**
 * The billing invariant after every task of an account has ended: balance = credits − settled
 * charges − debits, nothing reserved, and the projected account and ledger agree with a
 * replay of the account stream. Returns the replayed state.
 */
export async function expectBooksBalance(gw: TestGateway, accountId: string) {
  const { events, views, runner } = gw.gateway.deps;
  await runner.waitFor(await events.headPosition());
  const recorded = await events.readStream(`account-${accountId}`);
  const replay = foldAccount(recorded.map(toDomainEvent).filter((e) => e !== undefined));
  const credits = recorded.filter((e) => e.type === 'QuotaCredited').reduce((s, e) => s + (e.data as { amount: number }).amount, 0);
  const charged = recorded.filter((e) => e.type === 'QuotaSettled').reduce((s, e) => s + (e.data as { charged: number }).charged, 0);
  const debited = recorded.filter((e) => e.type === 'QuotaDebited').reduce((s, e) => s + (e.data as { amount: number }).amount, 0);
  expect(replay.reserved).toBe(0);
  expect(replay.balance).toBe(credits - charged - debited);
  const view = (await views.get<AccountDoc>('accounts', accountId))!.doc;
  expect(view).toMatchObject({ balance: replay.balance, reserved: replay.reserved, usedQuota: replay.usedQuota });
  const ledger = await views.find<LedgerEntry>('ledger', { accountId }, { limit: 100_000 });
  expect(ledger.reduce((s, l) => s + l.doc.balanceDelta, 0)).toBe(replay.balance);
  expect(ledger.reduce((s, l) => s + l.doc.reservedDelta, 0)).toBe(0);
  return { replay, credits, charged, recorded };
}

/** Every reservation of the account closed exactly once (settled or released, never both). */
export async function expectEachReservationClosedOnce(gw: TestGateway, accountId: string) {
  const recorded = await gw.gateway.deps.events.readStream(`account-${accountId}`);
  const closes = new Map<string, number>();
  for (const e of recorded) {
    if (e.type === 'QuotaSettled' || e.type === 'QuotaReleased') {
      const id = (e.data as { reservationId: string }).reservationId;
      closes.set(id, (closes.get(id) ?? 0) + 1);
    }
  }
  const reserved = recorded.filter((e) => e.type === 'QuotaReserved').map((e) => (e.data as { reservationId: string }).reservationId);
  for (const id of reserved) expect(closes.get(id), `reservation ${id}`).toBe(1);
  return reserved.length;
}
