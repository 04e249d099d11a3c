import { describe, expect, it } from 'vitest';
import type { PriceTable } from '../../src/domain/events.js';
import { decidePriceTable, evolvePriceTable, initialPriceTable, priceTableDecider } from '../../src/domain/price-table.js';
import { fold } from '../../src/domain/decider.js';
import { decideWebhookSecret, evolveWebhookSecret, initialWebhookSecretState } from '../../src/domain/webhook-secret.js';

const table: PriceTable = {
  models: { a: { unit: 'request', price: 10 }, b: { unit: 'image', price: 20 } },
  groupRatios: { default: 1000, vip: 800 },
};

describe('price table decider', () => {
  it('sets, replaces and removes prices and ratios on the table the stream holds, keeping the rest', () => {
    const [event] = decidePriceTable(
      {
        type: 'ChangePrices',
        data: { models: { a: null, b: { unit: 'image', price: 25 }, c: { unit: 'second', price: 3 } }, groupRatios: { vip: null, pro: 900 } },
      },
      table,
    );
    expect(event).toEqual({
      type: 'PricesSet',
      data: { models: { b: { unit: 'image', price: 25 }, c: { unit: 'second', price: 3 } }, groupRatios: { default: 1000, pro: 900 } },
    });
    // The state it was decided on is not changed.
    expect(Object.keys(table.models)).toEqual(['a', 'b']);
  });

  it('an empty change appends the table as it is; the first change starts from an empty table', () => {
    expect(decidePriceTable({ type: 'ChangePrices', data: { models: {}, groupRatios: {} } }, table)).toEqual([{ type: 'PricesSet', data: table }]);
    expect(decidePriceTable({ type: 'ChangePrices', data: { models: {}, groupRatios: { default: 1000 } } }, initialPriceTable())).toEqual([
      { type: 'PricesSet', data: { models: {}, groupRatios: { default: 1000 } } },
    ]);
  });

  it('the last PricesSet is the table in force', () => {
    const second: PriceTable = { models: {}, groupRatios: { default: 500 } };
    expect(
      fold(priceTableDecider, [
        { type: 'PricesSet', data: table },
        { type: 'PricesSet', data: second },
      ]),
    ).toEqual(second);
    expect(evolvePriceTable(table, { type: 'TokenDeleted', data: { tokenId: 't' } })).toBe(table);
  });
});

describe('webhook secret decider', () => {
  it('a rotation always sets the new secret; ensuring one sets it only when there is none', () => {
    const none = initialWebhookSecretState();
    const set = { secret: 'whsec_old' };
    expect(decideWebhookSecret({ type: 'RotateWebhookSecret', data: { secret: 'whsec_new' } }, set)).toEqual([
      { type: 'WebhookSecretRotated', data: { secret: 'whsec_new' } },
    ]);
    expect(decideWebhookSecret({ type: 'EnsureWebhookSecret', data: { secret: 'whsec_new' } }, set)).toEqual([]);
    expect(decideWebhookSecret({ type: 'EnsureWebhookSecret', data: { secret: 'whsec_new' } }, none)).toEqual([
      { type: 'WebhookSecretRotated', data: { secret: 'whsec_new' } },
    ]);
    expect(evolveWebhookSecret(set, { type: 'WebhookSecretRotated', data: { secret: 'whsec_new' } })).toEqual({ secret: 'whsec_new' });
  });
});
