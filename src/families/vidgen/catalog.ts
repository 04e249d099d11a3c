/** The vidgen models (spec 4.3) and their default prices per second, by resolution tier. */
import { type ModelEntry, perSecond } from '../kit/prices.js';

/** The spec's per-second prices of the four resolution tiers. */
const videoTiers = { '480p': 2_000, '720p': 4_000, '1080p': 8_000, '4k': 16_000 };

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

export const vidgenCatalog: readonly ModelEntry[] = vidgenModels.map((model) => ({
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
}));
