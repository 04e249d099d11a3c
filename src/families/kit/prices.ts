/**
 * Default prices as the family catalogs state them: integer quota units; 500,000 units stand for
 * one US dollar in the gateways of this field. What a family serves and at which default price is
 * its own (src/families/<family>/catalog.ts); the embedded deployment starts with these.
 */
import type { ModelPrice } from '../../domain/events.js';

export interface ModelEntry {
  model: string;
  /** Channel family (upstream protocol). */
  family: string;
  price: ModelPrice;
}

export const perImage = (price: number): ModelPrice => ({ unit: 'image', price });

/** Per second of video, by resolution tier; the base price is the highest tier's. */
export const perSecond = (tiers: Record<string, number>, extras?: Record<string, number>): ModelPrice => ({
  unit: 'second',
  price: Math.max(...Object.values(tiers)),
  tiers,
  ...(extras ? { extras } : {}),
});

export const perRequest = (price: number): ModelPrice => ({ unit: 'request', price });

export const unique = <T>(xs: readonly T[]): T[] => [...new Set(xs)];
