/**
 * One busy account written by several processes at once (api instances reserving, a worker
 * settling), each with its own account service on the same store: every command goes through,
 * however often the appends conflict, and the books replay to the unit.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { foldAccount } from '../../src/domain/account.js';
import type { PriceBasis } from '../../src/domain/events.js';
import { toDomainEvent } from '../../src/domain/recorded.js';
import { createAccountService } from '../../src/engine/accounts/account-service.js';
import type { EventStore } from '../../src/ports/event-store.js';
import { useTempEventStore } from '../support/temp-event-store.js';

const basis: PriceBasis = { model: 'm', group: 'default', unit: 'request', unitPrice: 10, groupRatioPermille: 1000, units: 1 };
const meta = () => ({ at: new Date().toISOString() });
const WRITERS = 8;
const PER_WRITER = 40;

let store: EventStore;
useTempEventStore((s) => (store = s));

describe('an account contended by several writers', () => {
  it(`${WRITERS} writers × ${PER_WRITER} reservations, each settled by another writer: none refused, the books exact`, async () => {
    const writers = Array.from({ length: WRITERS }, () => createAccountService({ events: store, log: pino({ level: 'silent' }) }));
    await writers[0]!.execute('a1', { type: 'OpenAccount', data: { accountId: 'a1', userId: 'u1', group: 'default' } }, meta());
    await writers[0]!.execute('a1', { type: 'CreditQuota', data: { creditId: 'c1', amount: 1_000_000, note: 'top-up' } }, meta());
    const work = writers.flatMap((w, wi) =>
      Array.from({ length: PER_WRITER }, async (_, i) => {
        const id = `r${wi}_${i}`;
        await w.execute('a1', { type: 'ReserveQuota', data: { reservationId: id, taskId: `t${wi}_${i}`, amount: 10, model: 'm', basis } }, meta());
        // Settled by the next writer, as a worker settles what an api instance reserved.
        await writers[(wi + 1) % WRITERS]!.execute('a1', { type: 'SettleQuota', data: { reservationId: id, actual: 7 } }, meta());
      }),
    );
    const results = await Promise.allSettled(work);
    expect(results.filter((r) => r.status === 'rejected').map((r) => String(r.reason))).toEqual([]);
    const state = foldAccount((await store.readStream('account-a1')).map(toDomainEvent).filter((e) => e !== undefined));
    expect(state.reserved).toBe(0);
    expect(state.balance).toBe(1_000_000 - WRITERS * PER_WRITER * 7);
  }, 60_000);
});
