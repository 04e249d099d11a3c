/** The account's cap on tasks in flight: its open reservations, counted in the reserving decision. */
import { describe, expect, it } from 'vitest';
import { decideAccount, evolveAccount, initialAccountState, type AccountCommand, type AccountState } from '../../src/domain/account.js';
import type { PriceBasis } from '../../src/domain/events.js';
import { refused, throttled } from '../support/refused.js';

const basis: PriceBasis = { model: 'img-1', group: 'default', unit: 'image', unitPrice: 10, groupRatioPermille: 1000, units: 1 };

const reserve = (reservationId: string, amount: number, maxOpenReservations?: number): AccountCommand => ({
  type: 'ReserveQuota',
  data: {
    reservationId,
    taskId: `task-of-${reservationId}`,
    amount,
    model: 'img-1',
    basis,
    ...(maxOpenReservations !== undefined ? { maxOpenReservations } : {}),
  },
});

function apply(state: AccountState, command: AccountCommand): AccountState {
  return decideAccount(command, state).reduce(evolveAccount, state);
}

function funded(balance: number): AccountState {
  let state = apply(initialAccountState(), { type: 'OpenAccount', data: { accountId: 'a1', userId: 'u1', group: 'default' } });
  state = apply(state, { type: 'CreditQuota', data: { creditId: 'c1', amount: balance, note: 'top-up' } });
  return state;
}

describe('tasks in flight per account', () => {
  it('refuses the reservation past the cap, and takes one again once a reservation is settled or released', () => {
    let state = funded(1000);
    state = apply(state, reserve('r1', 10, 2));
    state = apply(state, reserve('r2', 10, 2));
    expect(() => decideAccount(reserve('r3', 10, 2), state)).toThrow(throttled('too_many_tasks_in_flight'));
    expect(() => decideAccount(reserve('r3', 10, 2), state)).toThrow('the account already has 2 tasks in flight, the most it may');

    const settled = apply(state, { type: 'SettleQuota', data: { reservationId: 'r1', actual: 10 } });
    expect(decideAccount(reserve('r3', 10, 2), settled)).toHaveLength(1);
    const released = apply(state, { type: 'ReleaseQuota', data: { reservationId: 'r2', reason: 'task failed' } });
    expect(decideAccount(reserve('r3', 10, 2), released)).toHaveLength(1);
  });

  it('a retried reservation that is already open decides nothing, even at the cap', () => {
    let state = funded(1000);
    state = apply(state, reserve('r1', 10, 1));
    expect(decideAccount(reserve('r1', 10, 1), state)).toEqual([]);
  });

  it('without a cap (absent or 0) any number may be in flight', () => {
    let state = funded(1000);
    for (let i = 0; i < 20; i++) state = apply(state, reserve(`r${i}`, 10, i % 2 === 0 ? 0 : undefined));
    expect(state.openReservations.size).toBe(20);
  });

  it('the cap is not recorded: the event carries the reservation only', () => {
    const [event] = decideAccount(reserve('r1', 10, 3), funded(1000));
    expect(event).toEqual({ type: 'QuotaReserved', data: { reservationId: 'r1', taskId: 'task-of-r1', amount: 10, model: 'img-1', basis } });
  });

  it('a refusal that stands (not enough quota) comes before the one that passes with time', () => {
    let state = funded(15);
    state = apply(state, reserve('r1', 10, 1));
    expect(() => decideAccount(reserve('r2', 10, 1), state)).toThrow(refused('insufficient_quota', 'insufficient_quota'));
  });
});
