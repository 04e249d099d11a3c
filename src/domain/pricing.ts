/**
 * Integer pricing. A quote is
 *
 *   ceil(unitPrice(tier) × units × groupRatioPermille / 1000)
 *   + Σ ceil(extraPrice × groupRatioPermille / 1000)   for each requested, priced extra
 *
 * Rounding is always up, to the unit of quota, so a fraction of a unit is never given away.
 * Units may be fractional (5.5 seconds, 1.234 K tokens); they are read as the decimal they print
 * as (`String(units)`), so 0.1 is exactly one tenth and not the binary double just above it, and
 * the arithmetic is done on BigInt: no float ever reaches the result.
 */
import type { ModelPrice, PriceBasis, PriceTable } from './events.js';
import { Refusal } from './refusal.js';

export type QuoteRequest = Readonly<{
  model: string;
  group: string;
  units: number;
  /** Resolution or size preset; a tier without its own price falls back to the model's price. */
  tier?: string;
  /** Option names with a per-request surcharge. Unpriced names cost nothing; repeats count once. */
  extras?: readonly string[];
}>;

export type Quote = Readonly<{ amount: number; basis: PriceBasis }>;

/** Ratio applied when a group has none in the table: 1000‰ = 1.0. */
export const DEFAULT_GROUP_RATIO_PERMILLE = 1000;

export class InvalidUnitsError extends RangeError {
  constructor(readonly units: number) {
    super(`units must be a finite number >= 0, got ${units}`);
    this.name = 'InvalidUnitsError';
  }
}

/** Own keys only, so a model named `constructor` or `__proto__` is not "priced" by Object.prototype. */
export function priceOf(table: PriceTable, model: string): ModelPrice | undefined {
  return ownValue(table.models, model);
}

export function groupRatioOf(table: PriceTable, group: string): number {
  return ownValue(table.groupRatios, group) ?? DEFAULT_GROUP_RATIO_PERMILLE;
}

export function quote(table: PriceTable, request: QuoteRequest): Quote {
  const price = priceOf(table, request.model);
  if (!price) throw new Refusal('forbidden', 'model_not_priced', `model: ${request.model} has no price configured`, 'model');
  const ratio = groupRatioOf(table, request.group);
  const tierPrice = request.tier === undefined ? undefined : ownValue(price.tiers ?? {}, request.tier);
  const unitPrice = tierPrice ?? price.price;
  const extra = surchargeOf(price, request.extras ?? [], ratio);
  const basis: PriceBasis = {
    model: request.model,
    group: request.group,
    unit: price.unit,
    unitPrice,
    groupRatioPermille: ratio,
    units: request.units,
    ...(request.tier !== undefined ? { tier: request.tier } : {}),
    ...(extra > 0 ? { extra } : {}),
    ...(price.tiers ? { tierPrices: { ...price.tiers } } : {}),
  };
  return { amount: amountOf(basis), basis };
}

/** What a succeeded task is charged: the basis, its amount, and what the upstream claimed. */
export type Settlement = Readonly<{
  basis: PriceBasis;
  actual: number;
  /** The units the upstream reported when they were more than the request asked for. */
  deliveredUnits?: number;
}>;

/**
 * What a succeeded task is charged. The units are those the upstream returned, but never more
 * than the reservation's basis records as asked for (images `n` / `max_images`, seconds): an
 * upstream that returns 50 images for `n=1`, or 30 s for 5 s, is paid for what was asked, and
 * the excess it claimed is kept in `deliveredUnits` for the record. The tier is the one the
 * upstream returned (spec: video settles on the resolution the upstream returns), priced from
 * the tier prices recorded at submit time, so a higher tier may cost more than was reserved.
 */
export function settlementOf(basis: PriceBasis, usage: Readonly<{ units: number; tier?: string | undefined }>): Settlement {
  const tier = usage.tier ?? basis.tier;
  const tierPrice = tier !== undefined && basis.tierPrices ? ownValue(basis.tierPrices, tier) : undefined;
  // A delivered video reported shorter than a second (0 s, a missing duration) is implausible:
  // the video exists, so it is charged the seconds asked for rather than nothing.
  const reported = basis.unit === 'second' && !(usage.units >= 1) ? basis.units : usage.units;
  const units = Math.min(reported, basis.units);
  const charged: PriceBasis = { ...basis, units, unitPrice: tierPrice ?? basis.unitPrice, ...(tier !== undefined ? { tier } : {}) };
  return { basis: charged, actual: amountOf(charged), ...(reported > basis.units ? { deliveredUnits: reported } : {}) };
}

/**
 * Recomputes a charge from its recorded basis (`extra` is the already scaled surcharge).
 * Settlement uses it on the basis `settlementOf` derives from what the upstream returned.
 */
export function amountOf(basis: PriceBasis): number {
  const base = scaledCeil(basis.unitPrice, basis.units, basis.groupRatioPermille);
  return toSafeQuota(base + integerOf('extra', basis.extra ?? 0));
}

function surchargeOf(price: ModelPrice, extras: readonly string[], ratio: number): number {
  let total = 0n;
  for (const name of new Set(extras)) {
    const extraPrice = ownValue(price.extras ?? {}, name);
    if (extraPrice !== undefined) total += scaledCeil(extraPrice, 1, ratio);
  }
  return toSafeQuota(total);
}

/** ceil(unitPrice × units × ratio / 1000), exactly. */
function scaledCeil(unitPrice: number, units: number, ratioPermille: number): bigint {
  const { numerator, denominator } = decimalOf(units);
  return ceilDiv(integerOf('unit price', unitPrice) * numerator * integerOf('group ratio', ratioPermille), denominator * 1000n);
}

/** units = numerator / denominator, read from the shortest decimal that prints as `units`. */
function decimalOf(units: number): { numerator: bigint; denominator: bigint } {
  if (!Number.isFinite(units) || units < 0) throw new InvalidUnitsError(units);
  const match = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(units));
  if (!match) throw new InvalidUnitsError(units);
  const [, whole = '', fraction = '', exponent = '0'] = match;
  const power = Number(exponent) - fraction.length;
  const digits = BigInt(whole + fraction);
  return power >= 0 ? { numerator: digits * 10n ** BigInt(power), denominator: 1n } : { numerator: digits, denominator: 10n ** BigInt(-power) };
}

function ceilDiv(dividend: bigint, divisor: bigint): bigint {
  return (dividend + divisor - 1n) / divisor;
}

function integerOf(what: string, value: number): bigint {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${what} must be a non-negative integer, got ${value}`);
  return BigInt(value);
}

function toSafeQuota(value: bigint): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`quote ${value} exceeds the largest safe integer`);
  return Number(value);
}

function ownValue<V>(record: Readonly<Record<string, V>>, key: string): V | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}
