/** The motion models (spec 4.15) and their default prices per second, by resolution. */
import { type ModelEntry, perSecond, unique } from '../kit/prices.js';

export const motionTextModels = [
  'motion3.0-video',
  'motion3.0-video-prime',
  'motion2.7-t2v',
  'motion2.6-t2v',
  'motion2.6-t2v-us',
  'motion2.5-t2v-preview',
  'motion2.2-t2v-plus',
  'motionx2.1-t2v-plus',
  'motionx2.1-t2v-turbo',
] as const;

/** The spec names one image-to-video model; the others follow the same naming (docs/decisions/0036-motion.md). */
export const motionImageModels = [
  'motion2.2-kf2v-flash',
  'motion2.7-i2v',
  'motion2.6-i2v',
  'motion2.5-i2v-preview',
  'motion2.2-i2v-plus',
  'motionx2.1-i2v-plus',
  'motionx2.1-i2v-turbo',
] as const;

export const motionCatalog: readonly ModelEntry[] = unique([...motionTextModels, ...motionImageModels]).map((model) => ({
  model,
  family: 'motion',
  price: perSecond({ '480P': 2_000, '720P': 4_000, '1080P': 8_000 }),
}));
