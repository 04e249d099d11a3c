/** The async image models (spec 4.9: anime, vis, picgen async; pro-image is priced by sync-images) and their default prices per image. */
import { type ModelEntry, perImage, unique } from '../kit/prices.js';

export const picgenAsyncModels = ['vendor-picgen-4-0-250828', 'picgen-4-0-250828'] as const;
export const animeModels = ['anime-diffusion-4-5-full', 'anime-diffusion-4-5-curated'] as const;
export const visGenerationModels = ['vis-imagine-1.0', 'vis-imagine-2.0', 'vis-imagine-image', 'vis-imagine-image-quality', 'vis-imagine-image-2.0'] as const;
export const visEditModels = [
  'vis-imagine-1.0-edit',
  'vis-imagine-2.0-edit',
  'vis-imagine-image',
  'vis-imagine-image-quality',
  'vis-imagine-image-2.0',
] as const;

export const asyncImagesCatalog: readonly ModelEntry[] = [
  ...animeModels.map((model) => ({ model, family: 'images', price: perImage(10_000) })),
  ...unique([...visGenerationModels, ...visEditModels]).map((model) => ({ model, family: 'images', price: perImage(15_000) })),
  // One price per picgen model whichever route serves it (picgen-4-0 is also synchronous).
  ...picgenAsyncModels.map((model) => ({ model, family: 'images', price: perImage(20_000) })),
];
