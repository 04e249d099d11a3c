/** The tune models (spec 4.11), one request each, and their default prices. */
import { type ModelEntry, perRequest } from '../kit/prices.js';

export const tuneModels = ['tune_lyrics', 'tune_music'] as const;

export const tuneCatalog: readonly ModelEntry[] = tuneModels.map((model) => ({
  model,
  family: 'tune',
  price: perRequest(model === 'tune_music' ? 50_000 : 5_000),
}));
