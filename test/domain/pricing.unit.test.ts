import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { PriceTable } from '../../src/domain/events.js';
import { DEFAULT_GROUP_RATIO_PERMILLE, InvalidUnitsError, amountOf, groupRatioOf, priceOf, quote } from '../../src/domain/pricing.js';
import { refused } from '../support/refused.js';

const table: PriceTable = {
  models: {
    'img-1': { unit: 'image', price: 100 },
    'vid-1': { unit: 'second', price: 50, tiers: { '720p': 50, '1080p': 120 }, extras: { audio: 200, upscale: 33 } },
    'chat-1': { unit: 'ktoken', price: 3 },
    'free-1': { unit: 'request', price: 0 },
  },
  groupRatios: { default: 1000, vip: 800, premium: 1500, odd: 333, free: 0 },
};

describe('priceOf and groupRatioOf', () => {
  it('finds a model price', () => {
    expect(priceOf(table, 'img-1')).toEqual({ unit: 'image', price: 100 });
  });

  it('finds nothing for an unknown model, even one named like an Object.prototype key', () => {
    expect(priceOf(table, 'nope')).toBeUndefined();
    expect(priceOf(table, 'constructor')).toBeUndefined();
    expect(priceOf(table, '__proto__')).toBeUndefined();
  });

  it('uses 1000‰ for a group without a ratio', () => {
    expect(groupRatioOf(table, 'vip')).toBe(800);
    expect(groupRatioOf(table, 'unknown')).toBe(DEFAULT_GROUP_RATIO_PERMILLE);
    expect(groupRatioOf(table, 'toString')).toBe(1000);
  });
});

describe('quote', () => {
  it('prices whole units at the model price and group ratio', () => {
    expect(quote(table, { model: 'img-1', group: 'default', units: 4 })).toEqual({
      amount: 400,
      basis: { model: 'img-1', group: 'default', unit: 'image', unitPrice: 100, groupRatioPermille: 1000, units: 4 },
    });
    expect(quote(table, { model: 'img-1', group: 'vip', units: 4 }).amount).toBe(320);
    expect(quote(table, { model: 'img-1', group: 'premium', units: 1 }).amount).toBe(150);
  });

  it('applies the default ratio for a group missing from the table', () => {
    const { amount, basis } = quote(table, { model: 'img-1', group: 'newcomers', units: 2 });
    expect(amount).toBe(200);
    expect(basis.groupRatioPermille).toBe(1000);
  });

  it('rounds a fractional result up to the next unit of quota', () => {
    // 100 × 1 × 333 / 1000 = 33.3 → 34
    expect(quote(table, { model: 'img-1', group: 'odd', units: 1 }).amount).toBe(34);
    // 3 × 1.234 = 3.702 → 4
    expect(quote(table, { model: 'chat-1', group: 'default', units: 1.234 }).amount).toBe(4);
  });

  it('prices fractional units exactly (5.5 seconds)', () => {
    expect(quote(table, { model: 'vid-1', group: 'default', units: 5.5, tier: '1080p' }).amount).toBe(660);
    expect(quote(table, { model: 'vid-1', group: 'vip', units: 5.5, tier: '1080p' }).amount).toBe(528);
  });

  it('reads units as the decimal they print as, so binary float noise is not charged', () => {
    // As a double, 0.1 is slightly above one tenth and 0.7 × 10 is 7.000000000000001.
    expect(quote(table, { model: 'img-1', group: 'default', units: 0.1 }).amount).toBe(10);
    expect(quote(table, { model: 'chat-1', group: 'default', units: 0.7 }).amount).toBe(3); // 2.1 → 3
    expect(quote(table, { model: 'img-1', group: 'default', units: 0.3 }).amount).toBe(30);
    expect(quote(table, { model: 'img-1', group: 'default', units: 1e-7 }).amount).toBe(1);
  });

  it('costs nothing for zero units, a zero price or a zero ratio', () => {
    expect(quote(table, { model: 'img-1', group: 'default', units: 0 }).amount).toBe(0);
    expect(quote(table, { model: 'free-1', group: 'default', units: 9 }).amount).toBe(0);
    expect(quote(table, { model: 'img-1', group: 'free', units: 9, extras: [] }).amount).toBe(0);
  });

  it('uses the tier price, and the model price for a tier without its own', () => {
    const hd = quote(table, { model: 'vid-1', group: 'default', units: 10, tier: '1080p' });
    expect(hd.amount).toBe(1200);
    expect(hd.basis).toMatchObject({ unitPrice: 120, tier: '1080p' });
    const unknownTier = quote(table, { model: 'vid-1', group: 'default', units: 10, tier: '4k' });
    expect(unknownTier.amount).toBe(500);
    expect(unknownTier.basis).toMatchObject({ unitPrice: 50, tier: '4k' });
    expect(quote(table, { model: 'img-1', group: 'default', units: 1, tier: 'hd' }).amount).toBe(100);
  });

  it('adds each extra once per request, scaled by the ratio and rounded up on its own', () => {
    const withAudio = quote(table, { model: 'vid-1', group: 'default', units: 5, tier: '720p', extras: ['audio'] });
    expect(withAudio.amount).toBe(250 + 200);
    expect(withAudio.basis.extra).toBe(200);
    // odd ratio: base 5 × 50 × 0.333 = 83.25 → 84; audio 66.6 → 67; upscale 10.989 → 11
    const odd = quote(table, { model: 'vid-1', group: 'odd', units: 5, extras: ['audio', 'upscale', 'audio'] });
    expect(odd.amount).toBe(84 + 67 + 11);
    expect(odd.basis.extra).toBe(78);
  });

  it('charges nothing for an extra the model does not price', () => {
    const quoted = quote(table, { model: 'vid-1', group: 'default', units: 1, extras: ['watermark', 'toString'] });
    expect(quoted.amount).toBe(50);
    expect(quoted.basis).not.toHaveProperty('extra');
  });

  it('refuses an unknown model with a typed error naming it', () => {
    expect(() => quote(table, { model: 'nope', group: 'default', units: 1 })).toThrow(refused('forbidden', 'model_not_priced', 'model'));
    expect(() => quote(table, { model: 'nope', group: 'default', units: 1 })).toThrow('model: nope has no price configured');
  });

  it('refuses negative, infinite or NaN units', () => {
    for (const units of [-1, Number.POSITIVE_INFINITY, Number.NaN]) {
      expect(() => quote(table, { model: 'img-1', group: 'default', units })).toThrow(InvalidUnitsError);
    }
  });

  it('handles very large unit counts written in exponent form', () => {
    expect(quote(table, { model: 'free-1', group: 'default', units: 1e21 }).amount).toBe(0);
    expect(() => quote(table, { model: 'img-1', group: 'default', units: 1e21 })).toThrow(RangeError);
  });

  it('refuses a table whose prices are not integers', () => {
    const bad: PriceTable = { models: { x: { unit: 'image', price: 1.5 } }, groupRatios: {} };
    expect(() => quote(bad, { model: 'x', group: 'default', units: 1 })).toThrow(RangeError);
  });
});

describe('quote: properties', () => {
  const units = fc.oneof(
    fc.integer({ min: 0, max: 10_000 }),
    fc.integer({ min: 0, max: 1_000_000 }).map((n) => n / 1000),
    fc.double({ min: 0, max: 10_000, noNaN: true }),
  );
  const request = fc.record({
    model: fc.constantFrom('img-1', 'vid-1', 'chat-1', 'free-1'),
    group: fc.constantFrom('default', 'vip', 'premium', 'odd', 'free', 'unlisted'),
    units,
    tier: fc.option(fc.constantFrom('720p', '1080p', '4k'), { nil: undefined }),
    extras: fc.subarray(['audio', 'upscale', 'watermark']),
  });

  it('always yields a non-negative safe integer that the basis reproduces', () => {
    fc.assert(
      fc.property(request, (r) => {
        const { amount, basis } = quote(table, r);
        expect(Number.isSafeInteger(amount)).toBe(true);
        expect(amount).toBeGreaterThanOrEqual(0);
        expect(amountOf(basis)).toBe(amount);
      }),
    );
  });

  it('never charges less than the exact price, and less than one unit more for the base', () => {
    fc.assert(
      fc.property(request, (r) => {
        const { amount, basis } = quote(table, { ...r, extras: [] });
        const exact = (basis.unitPrice * basis.units * basis.groupRatioPermille) / 1000;
        // Floats only in the oracle, with a tolerance for their own error.
        const tolerance = 1e-9 * Math.max(1, exact);
        expect(amount).toBeGreaterThanOrEqual(exact - tolerance);
        expect(amount).toBeLessThan(exact + 1 + tolerance);
      }),
    );
  });

  it('never costs less for more units', () => {
    fc.assert(
      fc.property(request, units, (r, more) => {
        expect(quote(table, { ...r, units: r.units + more }).amount).toBeGreaterThanOrEqual(quote(table, r).amount);
      }),
    );
  });
});
