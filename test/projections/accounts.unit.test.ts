import { describe, expect, it } from 'vitest';
import type { DomainEvent, PriceBasis } from '../../src/domain/events.js';
import { accountsProjection } from '../../projections/accounts.js';
import { ledgerProjection } from '../../projections/ledger.js';
import { openReservationsProjection } from '../../projections/open-reservations.js';
import { tokensProjection } from '../../projections/tokens.js';
import { given } from './support.js';

const basis: PriceBasis = { model: 'm', group: 'default', unit: 'image', unitPrice: 10, groupRatioPermille: 1000, units: 2 };
const A = 'account-a1';
const history = [
  [A, { type: 'AccountOpened', data: { accountId: 'a1', userId: 'u1', group: 'default' } }],
  [A, { type: 'QuotaCredited', data: { creditId: 'c1', amount: 100, note: 'top-up' } }],
  [A, { type: 'QuotaReserved', data: { reservationId: 'r1', taskId: 't1', amount: 20, model: 'm', tokenId: 'k1', basis } }],
  [A, { type: 'QuotaReserved', data: { reservationId: 'r2', taskId: 't2', amount: 20, model: 'm', tokenId: 'k1', basis } }],
  [A, { type: 'QuotaSettled', data: { reservationId: 'r1', taskId: 't1', reserved: 20, actual: 10, charged: 10, tokenId: 'k1' } }],
  [A, { type: 'QuotaReleased', data: { reservationId: 'r2', taskId: 't2', amount: 20, reason: 'failed', tokenId: 'k1' } }],
  [A, { type: 'QuotaDebited', data: { debitId: 'd1', amount: 5, reason: 'adjustment' } }],
] as const satisfies readonly (readonly [string, DomainEvent])[];

describe('projections: given events, then document', () => {
  it('accounts: balance, reserved, available and used quota', () => {
    const doc = given(accountsProjection, history).get('a1');
    expect(doc).toEqual({ accountId: 'a1', userId: 'u1', group: 'default', balance: 85, reserved: 0, available: 85, usedQuota: 15, credited: 100 });
  });

  it('accounts: mid-way, reservations are held', () => {
    const doc = given(accountsProjection, history.slice(0, 4)).get('a1');
    expect(doc).toMatchObject({ balance: 100, reserved: 40, available: 60 });
  });

  it('ledger: one entry per money event whose deltas sum to the balance', () => {
    const entries = [...given(ledgerProjection, history).values()];
    expect(entries.map((e) => e.type)).toEqual(['QuotaCredited', 'QuotaReserved', 'QuotaReserved', 'QuotaSettled', 'QuotaReleased', 'QuotaDebited']);
    expect(entries.reduce((s, e) => s + e.balanceDelta, 0)).toBe(85);
    expect(entries.reduce((s, e) => s + e.reservedDelta, 0)).toBe(0);
    expect(entries.find((e) => e.type === 'QuotaSettled')).toMatchObject({ taskId: 't1', amount: 10, reservationId: 'r1' });
  });

  it('open reservations: only those neither settled nor released remain', () => {
    expect([...given(openReservationsProjection, history.slice(0, 5)).keys()]).toEqual(['r2']);
    expect(given(openReservationsProjection, history).size).toBe(0);
  });

  it('tokens: settlements charged with a token lower its remaining quota', () => {
    const docs = given(tokensProjection, [
      [
        'token-k1',
        {
          type: 'TokenCreated',
          data: {
            tokenId: 'k1',
            accountId: 'a1',
            userId: 'u1',
            keyHash: 'h',
            keyTail: 'abcd',
            name: 'n',
            status: 1,
            expiredTime: -1,
            remainQuota: 50,
            unlimitedQuota: false,
            modelLimits: [],
            group: 'default',
            allowIps: [],
            channelId: null,
          },
        },
      ],
      ...history,
    ]);
    expect(docs.get('k1')).toMatchObject({ remainQuota: 40, usedQuota: 10 });
  });
});
