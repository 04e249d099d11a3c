/** The synchronous picgen models (spec 4.7, 4.8) and their default prices per image. */
import { type ModelEntry, perImage } from '../kit/prices.js';

export const picgenSyncModels = [
  'vendor-picgen-5-0-pro-260628',
  'vendor-picgen-5-0-flash-260915',
  'vendor-picgen-5-0-lite-260128',
  'vendor-picgen-5-0-260128',
  'vendor-picgen-4-5-251128',
  'vendor-picgen-4-0-250828',
] as const;

export const picgenCatalog: readonly ModelEntry[] = picgenSyncModels.map((model) => ({ model, family: 'images', price: perImage(20_000) }));
