/** The clip models (spec 4.12) and their default prices per second, by mode. */
import { type ModelEntry, perSecond } from '../kit/prices.js';

export const clipModels = ['clip-v1', 'clip-v1-6', 'clip-v2-master'] as const;

export const clipCatalog: readonly ModelEntry[] = clipModels.map((model) => ({ model, family: 'clip', price: perSecond({ std: 3_000, pro: 6_000 }) }));
