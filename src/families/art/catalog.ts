/** The art models (spec 4.14), one request each, and their default prices. */
import { type ModelEntry, perRequest } from '../kit/prices.js';

const artModels = ['art_imagine', 'art_describe', 'art_blend', 'art_change'] as const;

export const artCatalog: readonly ModelEntry[] = artModels.map((model) => ({
  model,
  family: 'art',
  price: perRequest(model === 'art_describe' ? 5_000 : 25_000),
}));
