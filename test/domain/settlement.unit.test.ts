/** settlementOf: what a succeeded task is charged, whatever the upstream claims to have delivered. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decideAccount, foldAccount, initialAccountState, type AccountCommand } from '../../src/domain/account.js';
import type { DomainEvent, PriceTable } from '../../src/domain/events.js';
import { amountOf, quote, settlementOf } from '../../src/domain/pricing.js';

const table: PriceTable = {
  models: {
    'img-1': { unit: 'image', price: 100 },
    'vid-1': { unit: 'second', price: 50, tiers: { '720p': 50, '1080p': 120 }, extras: { audio: 200 } },
  },
  groupRatios: { default: 1000, vip: 800 },
};

describe('settlementOf', () => {
  it('charges the images asked for when the upstream returns more, and records what it claimed', () => {
    const { basis } = quote(table, { model: 'img-1', group: 'default', units: 1 });
    const s = settlementOf(basis, { units: 50 });
    expect(s.basis.units).toBe(1);
    expect(s.actual).toBe(100);
    expect(s.deliveredUnits).toBe(50);
  });

  it('charges fewer images when fewer came, with nothing to record', () => {
    const { basis } = quote(table, { model: 'img-1', group: 'default', units: 4 });
    const s = settlementOf(basis, { units: 3 });
    expect(s).toEqual({ basis: { ...basis, units: 3 }, actual: 300 });
  });

  it('charges the seconds asked for at the resolution delivered, which may cost more', () => {
    const { basis, amount } = quote(table, { model: 'vid-1', group: 'default', units: 5, tier: '720p', extras: ['audio'] });
    expect(amount).toBe(5 * 50 + 200);
    const s = settlementOf(basis, { units: 30, tier: '1080p' });
    expect(s.basis).toMatchObject({ units: 5, tier: '1080p', unitPrice: 120 });
    expect(s.actual).toBe(5 * 120 + 200);
    expect(s.deliveredUnits).toBe(30);
  });

  it('property: never more units than asked, the delivered tier, and the excess recorded exactly when there is one', () => {
    const units = fc.oneof(
      fc.integer({ min: 0, max: 10_000 }),
      fc.integer({ min: 0, max: 1_000_000 }).map((n) => n / 1000),
    );
    fc.assert(
      fc.property(
        fc.constantFrom('img-1', 'vid-1'),
        fc.constantFrom('default', 'vip'),
        units,
        units,
        fc.option(fc.constantFrom('720p', '1080p'), { nil: undefined }),
        fc.option(fc.constantFrom('720p', '1080p'), { nil: undefined }),
        (model, group, asked, delivered, reservedTier, deliveredTier) => {
          const { basis } = quote(table, { model, group, units: asked, ...(reservedTier ? { tier: reservedTier } : {}) });
          const s = settlementOf(basis, { units: delivered, ...(deliveredTier ? { tier: deliveredTier } : {}) });
          // A video reported under a second is charged the seconds asked for.
          const counted = model === 'vid-1' && delivered < 1 ? asked : delivered;
          expect(s.basis.units).toBe(Math.min(asked, counted));
          expect(s.basis.units).toBeLessThanOrEqual(basis.units);
          expect(s.actual).toBe(amountOf(s.basis));
          // What the requested units cost at the delivered tier bounds the charge.
          expect(s.actual).toBeLessThanOrEqual(amountOf({ ...s.basis, units: asked }));
          if (deliveredTier ?? reservedTier) expect(s.basis.tier).toBe(deliveredTier ?? reservedTier);
          if (counted > asked) expect(s.deliveredUnits).toBe(counted);
          else expect(s).not.toHaveProperty('deliveredUnits');
        },
      ),
    );
  });
});

describe('the account records an over-delivery with the settlement', () => {
  const open: AccountCommand = { type: 'OpenAccount', data: { accountId: 'a', userId: 'u', group: 'default' } };
  const run = (commands: AccountCommand[]): { events: DomainEvent[] } => {
    const events: DomainEvent[] = [];
    let state = initialAccountState();
    for (const c of commands) {
      const decided = decideAccount(c, state);
      events.push(...decided);
      state = foldAccount(decided, state);
    }
    return { events };
  };

  it('keeps deliveredUnits on QuotaSettled and charges only the settlement amount', () => {
    const { basis, amount } = quote(table, { model: 'img-1', group: 'default', units: 1 });
    const s = settlementOf(basis, { units: 50 });
    const { events } = run([
      open,
      { type: 'CreditQuota', data: { creditId: 'c', amount: 10_000, note: 'test' } },
      { type: 'ReserveQuota', data: { reservationId: 'r', taskId: 't', amount, model: 'img-1', basis } },
      { type: 'SettleQuota', data: { reservationId: 'r', ...s } },
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'QuotaSettled', data: { reserved: 100, actual: 100, charged: 100, deliveredUnits: 50, basis: { units: 1 } } });
    expect(foldAccount(events)).toMatchObject({ balance: 9_900, reserved: 0, usedQuota: 100 });
  });
});
