/** std-image and pro-image (spec 4.5, 4.6; pro-image also on the async route) and their default prices per image. */
import { type ModelEntry, perImage } from '../kit/prices.js';

export const syncImagesCatalog: readonly ModelEntry[] = [
  { model: 'std-image', family: 'images', price: perImage(20_000) },
  { model: 'pro-image', family: 'images', price: perImage(40_000) },
];
