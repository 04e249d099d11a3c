/**
 * Step 1 of docs/adding-a-family.md, `catalog.ts`: the toy family's models with their channel
 * family and default price (kit/prices.ts). The embedded default seeds a simulator channel and
 * these prices from it; nothing else lists them.
 */
import { perImage, type ModelEntry } from '../../../src/families/kit/prices.js';

/** The channel family: the upstream protocol upstream.ts speaks. */
export const TOY_CHANNEL_FAMILY = 'toy';

export const toyModels = ['toy-sketch', 'toy-sketch-hd'] as const;
export type ToyModel = (typeof toyModels)[number];

/** Quota units per sketch. */
export const TOY_PRICES: Readonly<Record<ToyModel, number>> = { 'toy-sketch': 1_000, 'toy-sketch-hd': 4_000 };

export const toyCatalog: readonly ModelEntry[] = toyModels.map((model) => ({ model, family: TOY_CHANNEL_FAMILY, price: perImage(TOY_PRICES[model]) }));
