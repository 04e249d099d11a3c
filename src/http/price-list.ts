/**
 * What things cost, for one group: the price list a user reads (`GET /v1/pricing` with a key,
 * `GET /api/user/pricing` with a session). Every figure is in quota units, computed by the same
 * `quote` the submit path uses, so what is shown is what one unit is charged.
 */
import { z } from 'zod';
import { groupRatioOf, quote } from '../domain/pricing.js';
import type { PriceTable } from '../domain/events.js';

export const PriceListEntry = z.object({
  model: z.string(),
  /** What one unit is: `request`, `image`, `second` of video, or `ktoken` (1,000 tokens). */
  unit: z.string(),
  /** Quota units charged for one unit in this group (the default tier). */
  price: z.number().int(),
  /** Per tier (resolution, size preset): quota units for one unit. */
  tiers: z.record(z.string(), z.number().int()),
  /** Per-request surcharges by option, in quota units. */
  extras: z.record(z.string(), z.number().int()),
});
export const PriceList = z.object({
  group: z.string(),
  /** The group's ratio applied to every list price, in permille (1000 = ×1.0). */
  group_ratio_permille: z.number().int(),
  models: z.array(PriceListEntry),
});
export type PriceList = z.infer<typeof PriceList>;

export function priceListFor(table: PriceTable, group: string, models: readonly string[]): PriceList {
  const entries = models.flatMap((model) => {
    const listed = Object.hasOwn(table.models, model) ? table.models[model] : undefined;
    if (!listed) return [];
    const one = (tier?: string) => quote(table, { model, group, units: 1, ...(tier !== undefined ? { tier } : {}) }).amount;
    const extras = Object.fromEntries(Object.keys(listed.extras ?? {}).map((name) => [name, quote(table, { model, group, units: 0, extras: [name] }).amount]));
    return [{ model, unit: listed.unit, price: one(), tiers: Object.fromEntries(Object.keys(listed.tiers ?? {}).map((t) => [t, one(t)])), extras }];
  });
  return { group, group_ratio_permille: groupRatioOf(table, group), models: entries };
}
