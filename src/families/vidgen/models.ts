/**
 * What each `vidgen` model accepts (spec 4.3): resolution tiers, which reference inputs its
 * native model supports, and whether audio output is priced separately. The tier lists are the
 * spec's table. References follow spec 4.3 rules 1–2 and nothing stricter: `reference_image`
 * and audio items on every model, `first_frame` / `last_frame` where the native model takes
 * start/end frames (every model but the text-to-video lite one), reference video on 2.x only.
 */
import type { vidgenModels } from './catalog.js';

export type VidgenModel = (typeof vidgenModels)[number];
export type VidgenTier = '480p' | '720p' | '1080p' | '4k';

export const VIDGEN_TIERS: readonly VidgenTier[] = ['480p', '720p', '1080p', '4k'];

export interface VidgenCapabilities {
  tiers: readonly VidgenTier[];
  /** `first_frame` / `last_frame` image roles (spec 4.3 rule 1: where the native model has them). */
  frames: boolean;
  /** `reference_video` items (spec 4.3 rule 2: the 2.x models only). */
  referenceVideo: boolean;
  /** `generate_audio` defaults to true and is priced as the `audio` extra. */
  pricedAudio: boolean;
}

const UP_TO_1080P: readonly VidgenTier[] = ['480p', '720p', '1080p'];
const UP_TO_720P: readonly VidgenTier[] = ['480p', '720p'];
const SECOND_GENERATION = { frames: true, referenceVideo: true, pricedAudio: false } as const;

export const VIDGEN_MODELS: Readonly<Record<VidgenModel, VidgenCapabilities>> = {
  'vendor-vidgen-1-0-pro-250528': { tiers: UP_TO_1080P, frames: true, referenceVideo: false, pricedAudio: false },
  'vendor-vidgen-1-0-lite-t2v': { tiers: UP_TO_1080P, frames: false, referenceVideo: false, pricedAudio: false },
  'vendor-vidgen-1-0-lite-i2v': { tiers: UP_TO_1080P, frames: true, referenceVideo: false, pricedAudio: false },
  'vendor-vidgen-1-5-pro-251215': { tiers: UP_TO_1080P, frames: true, referenceVideo: false, pricedAudio: true },
  'vendor-vidgen-2-0-260128': { tiers: VIDGEN_TIERS, ...SECOND_GENERATION },
  'vendor-vidgen-2-0-fast-260128': { tiers: UP_TO_720P, ...SECOND_GENERATION },
  'vendor-vidgen-2-0-mini-260615': { tiers: UP_TO_720P, ...SECOND_GENERATION },
  'vendor-vidgen-2-5-260628': { tiers: UP_TO_1080P, ...SECOND_GENERATION },
};

/** Spec 4.3 rule 4: without `resolution`, reserve on the highest tier up to 1080p. */
export function reservationTier(capabilities: VidgenCapabilities): VidgenTier {
  const upTo1080p = capabilities.tiers.filter((t) => t !== '4k');
  return upTo1080p[upTo1080p.length - 1] ?? '720p';
}
