import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  InvalidQuotaAmountError,
  accountDecider,
  accountView,
  applyAccountEvents,
  applyAccountEventsUndoably,
  decideAccount,
  evolveAccount,
  foldAccount,
  initialAccountState,
  mutableAccountState,
  tokenUsageOf,
  type AccountCommand,
  type AccountEvent,
  type AccountState,
} from '../../src/domain/account.js';
import { accountSnapshot } from '../../src/domain/account-snapshot.js';
import { fold } from '../../src/domain/decider.js';
import type { PriceBasis } from '../../src/domain/events.js';
import { isRefusal } from '../../src/domain/refusal.js';
import { refused } from '../support/refused.js';

const basis: PriceBasis = { model: 'img-1', group: 'default', unit: 'image', unitPrice: 10, groupRatioPermille: 1000, units: 1 };

const open: AccountCommand = { type: 'OpenAccount', data: { accountId: 'a1', userId: 'u1', group: 'default' } };
const credit = (creditId: string, amount: number): AccountCommand => ({ type: 'CreditQuota', data: { creditId, amount, note: 'top-up' } });
const reserve = (reservationId: string, amount: number): AccountCommand => ({
  type: 'ReserveQuota',
  data: { reservationId, taskId: `task-of-${reservationId}`, amount, model: 'img-1', basis },
});
/** A reservation made with token `tokenId`, whose cap (when given) the decision enforces. */
const reserveWith = (reservationId: string, amount: number, tokenId: string, tokenQuotaLimit?: number): AccountCommand => ({
  type: 'ReserveQuota',
  data: {
    reservationId,
    taskId: `task-of-${reservationId}`,
    amount,
    model: 'img-1',
    basis,
    tokenId,
    ...(tokenQuotaLimit !== undefined ? { tokenQuotaLimit } : {}),
  },
});
const settle = (reservationId: string, actual: number): AccountCommand => ({ type: 'SettleQuota', data: { reservationId, actual } });
const release = (reservationId: string): AccountCommand => ({ type: 'ReleaseQuota', data: { reservationId, reason: 'task failed' } });
const debit = (debitId: string, amount: number): AccountCommand => ({ type: 'DebitQuota', data: { debitId, amount, reason: 'sync call' } });

/** Decides and evolves each command in turn, as the command handler would. */
function run(commands: readonly AccountCommand[], from: AccountState = initialAccountState()): { state: AccountState; events: AccountEvent[] } {
  let state = from;
  const events: AccountEvent[] = [];
  for (const command of commands) {
    const decided = decideAccount(command, state);
    for (const event of decided) state = evolveAccount(state, event);
    events.push(...decided);
  }
  return { state, events };
}

const given = (...commands: AccountCommand[]): AccountState => run([open, ...commands]).state;

describe('account: opening and crediting', () => {
  it('opens once; a second open decides nothing', () => {
    const { state, events } = run([open, open]);
    expect(events).toEqual([{ type: 'AccountOpened', data: open.data }]);
    expect(state).toMatchObject({ opened: true, accountId: 'a1', userId: 'u1', group: 'default' });
  });

  it('refuses every command on an account that is not open', () => {
    for (const command of [credit('c', 1), reserve('r', 1), settle('r', 1), release('r'), debit('d', 1)]) {
      expect(() => decideAccount(command, initialAccountState())).toThrow(refused('internal', 'account_not_open'));
    }
  });

  it('credits raise the balance; a credit id seen before decides nothing', () => {
    const state = given(credit('c1', 100));
    expect(decideAccount(credit('c1', 100), state)).toEqual([]);
    expect(accountView(given(credit('c1', 100), credit('c1', 100), credit('c2', 5)))).toEqual({
      balance: 105,
      reserved: 0,
      available: 105,
      usedQuota: 0,
    });
  });

  it('refuses a credit that is not a positive integer', () => {
    const state = given();
    for (const amount of [0, -1, 1.5, Number.NaN]) {
      expect(() => decideAccount(credit('c', amount), state)).toThrow(InvalidQuotaAmountError);
    }
  });
});

describe('account: reservations', () => {
  it('reserves within the available balance', () => {
    const state = given(credit('c1', 100), reserve('r1', 60));
    expect(accountView(state)).toEqual({ balance: 100, reserved: 60, available: 40, usedQuota: 0 });
    expect(state.openReservations.get('r1')).toEqual({ amount: 60, taskId: 'task-of-r1', model: 'img-1' });
  });

  it('may reserve exactly the available balance, and zero', () => {
    const state = given(credit('c1', 100), reserve('r1', 100), reserve('r0', 0));
    expect(accountView(state).available).toBe(0);
  });

  it('refuses a reservation that would take available below zero, saying how much there was', () => {
    const state = given(credit('c1', 100), reserve('r1', 60));
    const refusal = (() => {
      try {
        decideAccount(reserve('r2', 41), state);
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(refusal).toEqual(refused('insufficient_quota', 'insufficient_quota'));
    expect(refusal).toMatchObject({ message: 'quota: 41 needed, 40 available' });
  });

  it('re-reserving an open reservation with the same amount decides nothing', () => {
    const state = given(credit('c1', 100), reserve('r1', 60));
    expect(decideAccount(reserve('r1', 60), state)).toEqual([]);
  });

  it('re-reserving an open reservation with a different amount is a conflict', () => {
    const state = given(credit('c1', 100), reserve('r1', 60));
    expect(() => decideAccount(reserve('r1', 61), state)).toThrow(refused('internal', 'reservation_amount_differs'));
  });

  it('refuses to reopen a reservation that was already settled or released', () => {
    const state = given(credit('c1', 100), reserve('r1', 10), settle('r1', 10), reserve('r2', 10), release('r2'));
    expect(() => decideAccount(reserve('r1', 10), state)).toThrow(refused('internal', 'reservation_closed'));
    expect(() => decideAccount(reserve('r2', 10), state)).toThrow(refused('internal', 'reservation_closed'));
  });

  it('refuses a negative or fractional reservation', () => {
    const state = given(credit('c1', 100));
    expect(() => decideAccount(reserve('r1', -1), state)).toThrow(InvalidQuotaAmountError);
    expect(() => decideAccount(reserve('r1', 0.5), state)).toThrow(InvalidQuotaAmountError);
  });
});

describe('account: token caps', () => {
  it('counts what each token has reserved and what was charged to it', () => {
    const state = given(
      credit('c1', 1000),
      reserveWith('r1', 60, 't1'),
      reserveWith('r2', 30, 't1'),
      reserveWith('r3', 5, 't2'),
      settle('r1', 40),
      release('r3'),
    );
    expect(tokenUsageOf(state, 't1')).toEqual({ reserved: 30, used: 40 });
    expect(tokenUsageOf(state, 't2')).toEqual({ reserved: 0, used: 0 });
    expect(tokenUsageOf(state, 'never-seen')).toEqual({ reserved: 0, used: 0 });
  });

  it('refuses a reservation that would take the token past its cap, counting open reservations', () => {
    const state = given(credit('c1', 1000), reserveWith('r1', 40, 't1', 100), reserveWith('r2', 30, 't1', 100), settle('r1', 40));
    // used 40 + reserved 30: 30 left under the cap of 100.
    expect(decideAccount(reserveWith('r3', 30, 't1', 100), state)).toHaveLength(1);
    expect(() => decideAccount(reserveWith('r3', 31, 't1', 100), state)).toThrow(refused('forbidden', 'token_quota_exhausted', 'Authorization'));
    expect(() => decideAccount(reserveWith('r3', 31, 't1', 100), state)).toThrow('Authorization: the API key has 30 quota left, 31 needed');
    // Another token, and the same token without a cap (unlimited), are not held back by it.
    expect(decideAccount(reserveWith('r4', 500, 't2', 500), state)).toHaveLength(1);
    expect(decideAccount(reserveWith('r4', 500, 't1'), state)).toHaveLength(1);
  });

  it('a released reservation gives the token its room back; a settled one keeps what was charged', () => {
    const state = given(credit('c1', 1000), reserveWith('r1', 50, 't1', 100), reserveWith('r2', 50, 't1', 100));
    expect(() => decideAccount(reserveWith('r3', 1, 't1', 100), state)).toThrow(refused('forbidden', 'token_quota_exhausted', 'Authorization'));
    const afterRelease = run([release('r1')], state).state;
    expect(decideAccount(reserveWith('r3', 50, 't1', 100), afterRelease)).toHaveLength(1);
    const afterSettle = run([settle('r2', 20)], afterRelease).state;
    expect(tokenUsageOf(afterSettle, 't1')).toEqual({ reserved: 0, used: 20 });
    expect(() => decideAccount(reserveWith('r3', 81, 't1', 100), afterSettle)).toThrow(refused('forbidden', 'token_quota_exhausted', 'Authorization'));
  });

  it('checks the token before the balance, as the HTTP layer did', () => {
    const state = given(credit('c1', 10));
    expect(() => decideAccount(reserveWith('r1', 50, 't1', 20), state)).toThrow(refused('forbidden', 'token_quota_exhausted', 'Authorization'));
    expect(() => decideAccount(reserveWith('r1', 50, 't1', 100), state)).toThrow(refused('insufficient_quota', 'insufficient_quota'));
  });

  it('a retried reservation decides nothing even when the cap is now used up by it', () => {
    const state = given(credit('c1', 100), reserveWith('r1', 100, 't1', 100));
    expect(decideAccount(reserveWith('r1', 100, 't1', 100), state)).toEqual([]);
  });

  it('keeps the cap out of the recorded event, so the event catalog is unchanged', () => {
    const [event] = decideAccount(reserveWith('r1', 10, 't1', 100), given(credit('c1', 100)));
    expect(event).toEqual({ type: 'QuotaReserved', data: { reservationId: 'r1', taskId: 'task-of-r1', amount: 10, model: 'img-1', basis, tokenId: 't1' } });
  });

  it('refuses a cap that is not a non-negative integer', () => {
    expect(() => decideAccount(reserveWith('r1', 1, 't1', -1), given(credit('c1', 10)))).toThrow(InvalidQuotaAmountError);
  });

  it('folds an account stream written before token caps existed, to the same balances', () => {
    // As appended by the previous decider: reservations with and without a token, a settlement
    // that names its token and one that does not (older still), a release.
    const old: AccountEvent[] = [
      { type: 'AccountOpened', data: { accountId: 'a1', userId: 'u1', group: 'default' } },
      { type: 'QuotaCredited', data: { creditId: 'c1', amount: 500, note: 'top-up' } },
      { type: 'QuotaReserved', data: { reservationId: 'r1', taskId: 't1', amount: 100, model: 'img-1', basis, tokenId: 'k1' } },
      { type: 'QuotaReserved', data: { reservationId: 'r2', taskId: 't2', amount: 50, model: 'img-1', basis } },
      { type: 'QuotaReserved', data: { reservationId: 'r3', taskId: 't3', amount: 70, model: 'img-1', basis, tokenId: 'k1' } },
      { type: 'QuotaReserved', data: { reservationId: 'r4', taskId: 't4', amount: 10, model: 'img-1', basis, tokenId: 'k1' } },
      { type: 'QuotaSettled', data: { reservationId: 'r1', taskId: 't1', reserved: 100, actual: 80, charged: 80, tokenId: 'k1' } },
      { type: 'QuotaSettled', data: { reservationId: 'r3', taskId: 't3', reserved: 70, actual: 70, charged: 70 } },
      { type: 'QuotaSettled', data: { reservationId: 'r2', taskId: 't2', reserved: 50, actual: 50, charged: 50 } },
      { type: 'QuotaReleased', data: { reservationId: 'r4', taskId: 't4', amount: 10, reason: 'failed', tokenId: 'k1' } },
    ];
    const state = foldAccount(old);
    expect(accountView(state)).toEqual({ balance: 300, reserved: 0, available: 300, usedQuota: 200 });
    // Only the settlement naming the token counts as its use, as in the tokens view.
    expect(tokenUsageOf(state, 'k1')).toEqual({ reserved: 0, used: 80 });
    expect(foldAccount(old)).toEqual(fold(accountDecider, old));
  });
});

describe('account: settlement', () => {
  it('charges the actual cost when below the reservation; the rest returns to the balance', () => {
    const { state, events } = run([open, credit('c1', 100), reserve('r1', 60), settle('r1', 25)]);
    expect(events.at(-1)).toEqual({
      type: 'QuotaSettled',
      data: { reservationId: 'r1', taskId: 'task-of-r1', reserved: 60, actual: 25, charged: 25 },
    });
    expect(accountView(state)).toEqual({ balance: 75, reserved: 0, available: 75, usedQuota: 25 });
  });

  it('charges more than reserved when the result cost more and the balance allows it', () => {
    const state = given(credit('c1', 100), reserve('r1', 60), settle('r1', 90));
    expect(accountView(state)).toEqual({ balance: 10, reserved: 0, available: 10, usedQuota: 90 });
  });

  it('caps the charge so the available balance never goes below zero', () => {
    const { state, events } = run([open, credit('c1', 100), reserve('r1', 60), reserve('r2', 30), settle('r1', 500)]);
    // r1 may use its 60 plus the 10 nobody reserved; r2's 30 stays untouched.
    expect(events.at(-1)).toMatchObject({ type: 'QuotaSettled', data: { reserved: 60, actual: 500, charged: 70 } });
    expect(accountView(state)).toEqual({ balance: 30, reserved: 30, available: 0, usedQuota: 70 });
  });

  it('records the settlement basis when given', () => {
    const state = given(credit('c1', 100), reserve('r1', 60));
    const [event] = decideAccount({ type: 'SettleQuota', data: { reservationId: 'r1', actual: 20, basis } }, state);
    expect(event).toMatchObject({ type: 'QuotaSettled', data: { basis } });
  });

  it('is idempotent: a settled or released reservation settles to nothing', () => {
    const state = given(credit('c1', 100), reserve('r1', 60), settle('r1', 20), reserve('r2', 10), release('r2'));
    expect(decideAccount(settle('r1', 20), state)).toEqual([]);
    expect(decideAccount(settle('r1', 99), state)).toEqual([]);
    expect(decideAccount(settle('r2', 10), state)).toEqual([]);
  });

  it('refuses to settle a reservation it never saw', () => {
    expect(() => decideAccount(settle('nope', 1), given(credit('c1', 10)))).toThrow(refused('internal', 'unknown_reservation'));
  });

  it('refuses a negative actual cost', () => {
    const state = given(credit('c1', 100), reserve('r1', 60));
    expect(() => decideAccount(settle('r1', -5), state)).toThrow(InvalidQuotaAmountError);
  });
});

describe('account: release', () => {
  it('returns the whole reservation to the available balance', () => {
    const { state, events } = run([open, credit('c1', 100), reserve('r1', 60), release('r1')]);
    expect(events.at(-1)).toEqual({
      type: 'QuotaReleased',
      data: { reservationId: 'r1', taskId: 'task-of-r1', amount: 60, reason: 'task failed', model: 'img-1' },
    });
    expect(accountView(state)).toEqual({ balance: 100, reserved: 0, available: 100, usedQuota: 0 });
  });

  it('is idempotent: a released or settled reservation releases to nothing', () => {
    const state = given(credit('c1', 100), reserve('r1', 60), release('r1'), reserve('r2', 5), settle('r2', 5));
    expect(decideAccount(release('r1'), state)).toEqual([]);
    expect(decideAccount(release('r2'), state)).toEqual([]);
  });

  it('refuses to release a reservation it never saw', () => {
    expect(() => decideAccount(release('nope'), given())).toThrow(refused('internal', 'unknown_reservation'));
  });
});

describe('account: debits', () => {
  it('takes quota from the balance and counts it as used', () => {
    const state = given(credit('c1', 100), debit('d1', 30));
    expect(accountView(state)).toEqual({ balance: 70, reserved: 0, available: 70, usedQuota: 30 });
  });

  it('refuses a debit beyond the available balance (reservations included)', () => {
    const state = given(credit('c1', 100), reserve('r1', 80));
    expect(() => decideAccount(debit('d1', 21), state)).toThrow(refused('insufficient_quota', 'insufficient_quota'));
    expect(decideAccount(debit('d1', 20), state)).toHaveLength(1);
  });

  it('a debit id seen before decides nothing', () => {
    const state = given(credit('c1', 100), debit('d1', 30));
    expect(decideAccount(debit('d1', 30), state)).toEqual([]);
  });

  it('refuses a debit that is not a positive integer', () => {
    expect(() => decideAccount(debit('d1', 0), given(credit('c1', 10)))).toThrow(InvalidQuotaAmountError);
  });
});

describe('account: evolve and fold', () => {
  it('evolve does not change the state it is given', () => {
    const before = given(credit('c1', 100));
    const snapshot = structuredClone(before);
    evolveAccount(before, { type: 'QuotaReserved', data: { reservationId: 'r1', taskId: 't', amount: 10, model: 'm', basis } });
    expect(before).toEqual(snapshot);
  });

  it('absorbs a duplicate event in the stream instead of applying it twice', () => {
    const { events } = run([open, credit('c1', 100), reserve('r1', 60), settle('r1', 50), debit('d1', 5)]);
    const withDuplicates = events.flatMap((event) => [event, event]);
    expect(foldAccount(withDuplicates)).toEqual(foldAccount(events));
    expect(accountView(foldAccount(withDuplicates))).toEqual({ balance: 45, reserved: 0, available: 45, usedQuota: 55 });
  });

  it('ignores events of other streams', () => {
    const state = given(credit('c1', 100));
    expect(evolveAccount(state, { type: 'AssetsExpired', data: { assetKeys: [] } })).toEqual(state);
  });

  it('folds like the generic decider fold', () => {
    const { events } = run([open, credit('c1', 100), reserve('r1', 60), release('r1')]);
    expect(foldAccount(events)).toEqual(fold(accountDecider, events));
  });
});

// ---- properties ----

const ids = (prefix: string, count: number) => fc.integer({ min: 0, max: count - 1 }).map((n) => `${prefix}${n}`);
const reservationId = ids('r', 6);
const tokenId = ids('k', 3);
const command: fc.Arbitrary<AccountCommand> = fc.oneof(
  { weight: 1, arbitrary: fc.constant(open) },
  { weight: 3, arbitrary: fc.tuple(ids('c', 6), fc.integer({ min: 1, max: 1000 })).map(([id, amount]) => credit(id, amount)) },
  { weight: 4, arbitrary: fc.tuple(reservationId, fc.integer({ min: 0, max: 600 })).map(([id, amount]) => reserve(id, amount)) },
  // With a token, capped or not; the cap varies, as a PUT of remain_quota moves it.
  {
    weight: 4,
    arbitrary: fc
      .tuple(reservationId, fc.integer({ min: 0, max: 600 }), tokenId, fc.option(fc.integer({ min: 0, max: 1200 }), { nil: undefined }))
      .map(([id, amount, token, cap]) => reserveWith(id, amount, token, cap)),
  },
  // Actual from 0 to well above any reservation, to exercise both sides of `reserved` and the cap.
  { weight: 3, arbitrary: fc.tuple(reservationId, fc.integer({ min: 0, max: 1500 })).map(([id, actual]) => settle(id, actual)) },
  { weight: 2, arbitrary: reservationId.map(release) },
  { weight: 2, arbitrary: fc.tuple(ids('d', 6), fc.integer({ min: 1, max: 500 })).map(([id, amount]) => debit(id, amount)) },
);
/**
 * A few commands before the account is opened (all refused), then any interleaving; each
 * command is sometimes sent twice in a row, as a retrying client would.
 */
const commandSequence = fc
  .tuple(fc.array(command, { maxLength: 3 }), fc.array(fc.tuple(command, fc.boolean()), { minLength: 10, maxLength: 80, size: 'max' }))
  .map(([beforeOpen, pairs]) => [...beforeOpen, open, ...pairs.flatMap(([c, twice]) => (twice ? [c, c] : [c]))]);

/** The codes of the refusals the aggregate names. */
const knownRefusals = [
  'account_not_open',
  'insufficient_quota',
  'unknown_reservation',
  'reservation_amount_differs',
  'reservation_closed',
  'token_quota_exhausted',
];

function sum(events: readonly AccountEvent[], pick: (event: AccountEvent) => number): number {
  return events.reduce((total, event) => total + pick(event), 0);
}

describe('account: properties under any interleaving of commands', () => {
  it('keeps the money invariants, replays to the same state, and closes each reservation once', () => {
    fc.assert(
      fc.property(commandSequence, (commands) => {
        let state = initialAccountState();
        const events: AccountEvent[] = [];
        for (const command of commands) {
          let decided: AccountEvent[];
          try {
            decided = decideAccount(command, state);
          } catch (error) {
            // Refused commands are skipped, but only for the reasons the aggregate names.
            expect(knownRefusals.some((code) => isRefusal(error, code))).toBe(true);
            continue;
          }
          const availableBefore = accountView(state).available;
          for (const event of decided) {
            if (event.type === 'QuotaSettled') {
              expect(event.data.charged).toBe(Math.min(event.data.actual, event.data.reserved + availableBefore));
            }
            state = evolveAccount(state, event);
          }
          events.push(...decided);

          // (b) available never below zero
          expect(accountView(state).available).toBeGreaterThanOrEqual(0);
          // (c) reserved is the sum of the open reservations
          const open = [...state.openReservations.values()].reduce((total, r) => total + r.amount, 0);
          expect(state.reserved).toBe(open);
          // A command that was just applied, sent again, decides nothing.
          if (decided.length > 0) expect(decideAccount(command, state)).toEqual([]);
          // A capped reservation never takes its token past the cap.
          if (decided.length > 0 && command.type === 'ReserveQuota' && command.data.tokenQuotaLimit !== undefined) {
            const usage = tokenUsageOf(state, command.data.tokenId);
            expect(usage.used + usage.reserved).toBeLessThanOrEqual(command.data.tokenQuotaLimit);
          }
          // Per token, reserved is the sum of its open reservations.
          for (const [token, usage] of state.tokenUsage) {
            const openOfToken = [...state.openReservations.values()].filter((r) => r.tokenId === token).reduce((total, r) => total + r.amount, 0);
            expect(usage.reserved).toBe(openOfToken);
          }
        }

        // Per token, used is what the settlements naming it charged.
        for (const token of ['k0', 'k1', 'k2']) {
          const chargedToToken = sum(events, (e) => (e.type === 'QuotaSettled' && e.data.tokenId === token ? e.data.charged : 0));
          expect(tokenUsageOf(state, token).used).toBe(chargedToToken);
        }

        // (a) balance = credits − charged settlements − debits
        const credits = sum(events, (e) => (e.type === 'QuotaCredited' ? e.data.amount : 0));
        const charged = sum(events, (e) => (e.type === 'QuotaSettled' ? e.data.charged : 0));
        const debits = sum(events, (e) => (e.type === 'QuotaDebited' ? e.data.amount : 0));
        expect(state.balance).toBe(credits - charged - debits);
        expect(state.usedQuota).toBe(charged + debits);

        // (d) replaying the produced events from scratch gives exactly the same state
        expect(foldAccount(events)).toEqual(state);

        // (e) every reservation id is closed at most once, and only after it was reserved
        const closings = events.filter((e) => e.type === 'QuotaSettled' || e.type === 'QuotaReleased');
        const closedIds = closings.map((e) => e.data.reservationId);
        expect(new Set(closedIds).size).toBe(closedIds.length);
        const reservedIds = new Set(events.flatMap((e) => (e.type === 'QuotaReserved' ? [e.data.reservationId] : [])));
        for (const id of closedIds) expect(reservedIds.has(id)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});

describe('account: a batch folded in place and undone', () => {
  it('undoing the decisions of any batch gives back the state before it exactly (the closed ids in their order)', () => {
    fc.assert(
      fc.property(commandSequence, fc.nat(), (commands, cut) => {
        const split = commands.length === 0 ? 0 : cut % commands.length;
        const state = mutableAccountState();
        const decideAll = (batch: readonly AccountCommand[], apply: (events: AccountEvent[]) => void) => {
          for (const command of batch) {
            try {
              apply(decideAccount(command, state));
            } catch {
              // Refusals decide nothing.
            }
          }
        };
        decideAll(commands.slice(0, split), (events) => applyAccountEvents(state, events));
        const before = mutableAccountState(state);
        const undos: (() => void)[] = [];
        decideAll(commands.slice(split), (events) => undos.push(applyAccountEventsUndoably(state, events)));
        for (const undo of undos.reverse()) undo();
        expect(state).toEqual(before);
        expect([...state.closedReservationIds]).toEqual([...before.closedReservationIds]);
      }),
      { numRuns: 500 },
    );
  });

  it('a snapshot folded in place is undone too: the closed ids it forgot come back', () => {
    const state = mutableAccountState(
      foldAccount([
        { type: 'AccountOpened', data: { accountId: 'a1', userId: 'u1', group: 'default' } },
        { type: 'QuotaCredited', data: { creditId: 'c1', amount: 100, note: '' } },
      ]),
    );
    applyAccountEvents(state, decideAccount(reserve('r1', 10), state));
    applyAccountEvents(state, decideAccount(release('r1'), state));
    const undo = applyAccountEventsUndoably(state, [
      {
        type: 'AccountSnapshotted',
        data: { ...accountSnapshot(state)!, recentlyClosedReservationIds: [] },
      },
    ]);
    expect(state.closedReservationIds.has('r1')).toBe(false);
    undo();
    expect([...state.closedReservationIds]).toEqual(['r1']);
  });
});

describe('account: a token cap under any interleaving', () => {
  /** One token with a fixed cap; settlements never cost more than was reserved. */
  const capped = fc.record({
    cap: fc.integer({ min: 0, max: 1000 }),
    steps: fc.array(
      fc.oneof(
        fc.tuple(fc.constant('reserve' as const), reservationId, fc.integer({ min: 0, max: 400 })),
        fc.tuple(fc.constant('settle' as const), reservationId, fc.integer({ min: 0, max: 100 })),
        fc.tuple(fc.constant('release' as const), reservationId, fc.constant(0)),
      ),
      { minLength: 5, maxLength: 60 },
    ),
  });

  it('accepts a reservation exactly when it fits under the cap, and never lets used + reserved exceed it', () => {
    fc.assert(
      fc.property(capped, ({ cap, steps }) => {
        // A balance far above the cap, so only the token can refuse.
        let state = given(credit('c1', 1_000_000));
        for (const [kind, id, value] of steps) {
          const open = state.openReservations.get(id);
          const command =
            kind === 'reserve'
              ? reserveWith(id, value, 'k0', cap)
              : kind === 'settle'
                ? settle(id, Math.floor(((open?.amount ?? 0) * value) / 100))
                : release(id);
          const before = tokenUsageOf(state, 'k0');
          let decided: AccountEvent[];
          try {
            decided = decideAccount(command, state);
          } catch (error) {
            if (isRefusal(error, 'token_quota_exhausted')) {
              expect(value).toBeGreaterThan(cap - before.used - before.reserved);
              expect(error.message).toContain(`has ${Math.max(0, cap - before.used - before.reserved)} quota left`);
            } else expect(['unknown_reservation', 'reservation_amount_differs', 'reservation_closed'].some((code) => isRefusal(error, code))).toBe(true);
            continue;
          }
          if (kind === 'reserve' && decided.length > 0) expect(value).toBeLessThanOrEqual(cap - before.used - before.reserved);
          for (const event of decided) state = evolveAccount(state, event);
          const after = tokenUsageOf(state, 'k0');
          expect(after.used + after.reserved).toBeLessThanOrEqual(cap);
        }
      }),
      { numRuns: 500 },
    );
  });
});
