/**
 * What each `vidgen` model accepts (spec 4.3): resolution tiers, which reference roles its
 * native model supports, and whether audio output is priced separately. The tier lists are the
 * spec's table; the reference capabilities follow the native models (decisions.md): the
 * text-to-video lite model takes no references, frames work everywhere else, reference images
 * on the image-to-video lite model and the 2.x line, reference video and audio only on 2.x.
 */
import type { vidgenModels } from '../../bootstrap/model-catalog.js';

export type VidgenModel = (typeof vidgenModels)[number];
export type VidgenTier = '480p' | '720p' | '1080p' | '4k';

export const VIDGEN_TIERS: readonly VidgenTier[] = ['480p', '720p', '1080p', '4k'];

export interface VidgenCapabilities {
  tiers: readonly VidgenTier[];
  /** `first_frame` / `last_frame` image roles. */
  frames: boolean;
  /** `reference_image` role. */
  referenceImages: boolean;
  /** Reference video and audio input (2.x models only). */
  referenceMedia: boolean;
  /** `generate_audio` defaults to true and is priced as the `audio` extra. */
  pricedAudio: boolean;
}

const UP_TO_1080P: readonly VidgenTier[] = ['480p', '720p', '1080p'];
const UP_TO_720P: readonly VidgenTier[] = ['480p', '720p'];
const SECOND_GENERATION = { frames: true, referenceImages: true, referenceMedia: true, pricedAudio: false } as const;

export const VIDGEN_MODELS: Readonly<Record<VidgenModel, VidgenCapabilities>> = {
  'vendor-vidgen-1-0-pro-250528': { tiers: UP_TO_1080P, frames: true, referenceImages: false, referenceMedia: false, pricedAudio: false },
  'vendor-vidgen-1-0-lite-t2v': { tiers: UP_TO_1080P, frames: false, referenceImages: false, referenceMedia: false, pricedAudio: false },
  'vendor-vidgen-1-0-lite-i2v': { tiers: UP_TO_1080P, frames: true, referenceImages: true, referenceMedia: false, pricedAudio: false },
  'vendor-vidgen-1-5-pro-251215': { tiers: UP_TO_1080P, frames: true, referenceImages: false, referenceMedia: false, pricedAudio: true },
  'vendor-vidgen-2-0-260128': { tiers: VIDGEN_TIERS, ...SECOND_GENERATION },
  'vendor-vidgen-2-0-fast-260128': { tiers: UP_TO_720P, ...SECOND_GENERATION },
  'vendor-vidgen-2-0-mini-260615': { tiers: UP_TO_720P, ...SECOND_GENERATION },
  'vendor-vidgen-2-5-260628': { tiers: UP_TO_1080P, ...SECOND_GENERATION },
};

export function isVidgenModel(model: unknown): model is VidgenModel {
  return typeof model === 'string' && Object.hasOwn(VIDGEN_MODELS, model);
}

/** Spec 4.3 rule 4: without `resolution`, reserve on the highest tier up to 1080p. */
export function reservationTier(capabilities: VidgenCapabilities): VidgenTier {
  const upTo1080p = capabilities.tiers.filter((t) => t !== '4k');
  return upTo1080p[upTo1080p.length - 1] ?? '720p';
}
