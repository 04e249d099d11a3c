/**
 * Every model the spec names, by upstream family (the channel family that speaks its
 * protocol), with the default price the embedded deployment starts with. Prices are integer
 * quota units; 500,000 units stand for one US dollar in the gateways of this field.
 */
import type { ModelPrice } from '../domain/events.js';

export interface ModelEntry {
  model: string;
  /** Channel family (upstream protocol). */
  family: string;
  price: ModelPrice;
}

const videoTiers = { '480p': 2_000, '720p': 4_000, '1080p': 8_000, '4k': 16_000 };
const perImage = (price: number): ModelPrice => ({ unit: 'image', price });
const perSecond = (tiers: Record<string, number>, extras?: Record<string, number>): ModelPrice => ({
  unit: 'second',
  price: Math.max(...Object.values(tiers)),
  tiers,
  ...(extras ? { extras } : {}),
});
const perRequest = (price: number): ModelPrice => ({ unit: 'request', price });

export const vidgenModels = [
  'vendor-vidgen-1-0-pro-250528',
  'vendor-vidgen-1-0-lite-t2v',
  'vendor-vidgen-1-0-lite-i2v',
  'vendor-vidgen-1-5-pro-251215',
  'vendor-vidgen-2-0-260128',
  'vendor-vidgen-2-0-fast-260128',
  'vendor-vidgen-2-0-mini-260615',
  'vendor-vidgen-2-5-260628',
] as const;

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

/** The spec names one image-to-video model; the others follow the same naming (decisions.md). */
export const motionImageModels = ['motion2.2-kf2v-flash', 'motion2.7-i2v', 'motion2.6-i2v', 'motion2.5-i2v-preview', 'motion2.2-i2v-plus', 'motionx2.1-i2v-plus', 'motionx2.1-i2v-turbo'] as const;

export const picgenSyncModels = [
  'vendor-picgen-5-0-pro-260628',
  'vendor-picgen-5-0-flash-260915',
  'vendor-picgen-5-0-lite-260128',
  'vendor-picgen-5-0-260128',
  'vendor-picgen-4-5-251128',
  'vendor-picgen-4-0-250828',
] as const;

export const picgenAsyncModels = ['vendor-picgen-4-0-250828', 'picgen-4-0-250828'] as const;
export const animeModels = ['anime-diffusion-4-5-full', 'anime-diffusion-4-5-curated'] as const;
export const visGenerationModels = ['vis-imagine-1.0', 'vis-imagine-2.0', 'vis-imagine-image', 'vis-imagine-image-quality', 'vis-imagine-image-2.0'] as const;
export const visEditModels = ['vis-imagine-1.0-edit', 'vis-imagine-2.0-edit', 'vis-imagine-image', 'vis-imagine-image-quality', 'vis-imagine-image-2.0'] as const;
export const clipModels = ['clip-v1', 'clip-v1-6', 'clip-v2-master'] as const;
export const tuneModels = ['tune_lyrics', 'tune_music'] as const;
export const artModels = ['art_imagine', 'art_describe', 'art_blend', 'art_change'] as const;

const unique = <T>(xs: readonly T[]): T[] => [...new Set(xs)];

export const modelCatalog: readonly ModelEntry[] = [
  ...vidgenModels.map((model) => ({
    model,
    family: 'vidgen',
    price: perSecond(
      model.includes('mini') || model.includes('fast')
        ? { '480p': videoTiers['480p'], '720p': videoTiers['720p'] }
        : model.includes('2-0-260128')
          ? videoTiers
          : { '480p': videoTiers['480p'], '720p': videoTiers['720p'], '1080p': videoTiers['1080p'] },
      model.includes('1-5') ? { audio: 10_000 } : undefined,
    ),
  })),
  { model: 'Vid-H3', family: 'vid-h3', price: perSecond({ '768P': 5_000, '2K': 12_000 }) },
  ...clipModels.map((model) => ({ model, family: 'clip', price: perSecond({ std: 3_000, pro: 6_000 }) })),
  ...unique([...motionTextModels, ...motionImageModels]).map((model) => ({
    model,
    family: 'motion',
    price: perSecond({ '480P': 2_000, '720P': 4_000, '1080P': 8_000 }),
  })),
  { model: 'std-image', family: 'images', price: perImage(20_000) },
  { model: 'pro-image', family: 'images', price: perImage(40_000) },
  ...animeModels.map((model) => ({ model, family: 'images', price: perImage(10_000) })),
  ...unique([...visGenerationModels, ...visEditModels]).map((model) => ({ model, family: 'images', price: perImage(15_000) })),
  ...unique([...picgenSyncModels, ...picgenAsyncModels]).map((model) => ({ model, family: 'images', price: perImage(20_000) })),
  ...tuneModels.map((model) => ({ model, family: 'tune', price: perRequest(model === 'tune_music' ? 50_000 : 5_000) })),
  ...artModels.map((model) => ({ model, family: 'art', price: perRequest(model === 'art_describe' ? 5_000 : 25_000) })),
];

export const channelFamilies = unique(modelCatalog.map((m) => m.family));
