/**
 * `metadata.content` of a vidgen request (spec 4.3 rules 1–2): reference items
 * `{type, role, <type>: {url}}` with `type` image_url / video_url / audio_url. Image items are
 * `reference_image` or the frames `first_frame` / `last_frame`; video items `reference_video`;
 * audio items `reference_audio` (the spec leaves the audio role open). Frames and references
 * are two modes and do not mix. What the model's native capabilities allow is checked here too.
 */
import { checkReferenceCounts, isPlainObject, readHttpUrl, refuse } from '../video-common.js';
import type { VidgenCapabilities } from './models.js';

const PARAM = 'metadata.content';

const ROLES_BY_TYPE = {
  image_url: ['reference_image', 'first_frame', 'last_frame'],
  video_url: ['reference_video'],
  audio_url: ['reference_audio'],
} as const;

type ItemType = keyof typeof ROLES_BY_TYPE;
export type ContentItem = { type: ItemType; role: string } & Partial<Record<ItemType, { url: string }>>;

/** text2video (no references), image2video (frames) or reference2video (reference media). */
export type VidgenAction = 'text2video' | 'image2video' | 'reference2video';

function readItem(value: unknown, index: number): ContentItem {
  const at = `${PARAM}.${index}`;
  if (!isPlainObject(value)) refuse(at, 'must be an object {type, role, <type>: {url}}');
  const type = value.type;
  if (typeof type !== 'string' || !Object.hasOwn(ROLES_BY_TYPE, type)) refuse(`${at}.type`, 'must be image_url, video_url or audio_url');
  const itemType = type as ItemType;
  const roles: readonly string[] = ROLES_BY_TYPE[itemType];
  if (typeof value.role !== 'string' || !roles.includes(value.role)) refuse(`${at}.role`, `a ${itemType} item takes the role ${roles.join(', ')}`);
  const holder = value[itemType];
  if (!isPlainObject(holder)) refuse(`${at}.${itemType}`, 'must be an object holding url');
  const url = readHttpUrl(holder.url, `${at}.${itemType}.url`);
  return { type: itemType, role: value.role, [itemType]: { url } };
}

function checkCapabilities(model: string, caps: VidgenCapabilities, items: readonly ContentItem[]): void {
  const has = (role: string) => items.some((i) => i.role === role);
  if (items.length > 0 && !caps.frames && !caps.referenceImages) refuse(PARAM, `${model} is text-to-video only and takes no references`);
  if ((has('reference_video') || has('reference_audio')) && !caps.referenceMedia) {
    refuse(PARAM, `reference video and audio input work only on the 2.x models, not ${model}`);
  }
  if (has('reference_image') && !caps.referenceImages) refuse(PARAM, `${model} does not take reference_image items; use first_frame / last_frame`);
  if ((has('first_frame') || has('last_frame')) && !caps.frames) refuse(PARAM, `${model} does not take first_frame / last_frame items`);
}

function checkFrames(items: readonly ContentItem[]): void {
  const count = (role: string) => items.filter((i) => i.role === role).length;
  const first = count('first_frame');
  const last = count('last_frame');
  if (first > 1 || last > 1) refuse(PARAM, 'at most one first_frame and one last_frame');
  if (last === 1 && first === 0) refuse(PARAM, 'a last_frame needs a first_frame');
  if (first + last > 0 && first + last < items.length) refuse(PARAM, 'first_frame / last_frame images cannot be mixed with reference media');
}

/** The checked items and the action they make; an empty or absent list is text-to-video. */
export function readContent(value: unknown, model: string, caps: VidgenCapabilities): { items: ContentItem[]; action: VidgenAction } {
  if (value === undefined || value === null) return { items: [], action: 'text2video' };
  if (!Array.isArray(value)) refuse(PARAM, 'must be an array of reference items');
  const items = value.map(readItem);
  checkReferenceCounts(PARAM, {
    images: items.filter((i) => i.type === 'image_url').length,
    videos: items.filter((i) => i.type === 'video_url').length,
    audio: items.filter((i) => i.type === 'audio_url').length,
  });
  checkCapabilities(model, caps, items);
  checkFrames(items);
  if (items.length === 0) return { items, action: 'text2video' };
  return { items, action: items.some((i) => i.role === 'first_frame') ? 'image2video' : 'reference2video' };
}
