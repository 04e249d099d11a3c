/**
 * `metadata.content` of a vidgen request (spec 4.3 rules 1–2): reference items
 * `{type, role, <type>: {url}}` with `type` image_url / video_url / audio_url. Image items are
 * `reference_image` or the frames `first_frame` / `last_frame`; video items `reference_video`;
 * audio items `reference_audio` (the spec leaves the audio role open). Only what the spec
 * refuses is refused, plus the frame rules a video cannot do otherwise (one first and one last
 * frame; a last frame after a first one; docs/decisions/0033-vidgen.md and
 * docs/decisions/0032-video-rules-refuse-only-what-the-spec-refuses.md). Frames may go with reference media:
 * the spec names no such limit, and an upstream that cannot mix them refuses the task itself.
 */
import { checkReferenceCounts, isPlainObject, readHttpUrl, refuse } from '../kit/fields.js';
import type { VidgenCapabilities } from './models.js';

const PARAM = 'metadata.content';
export const CONTENT_ARRAY_RULE = 'must be an array of reference items';
export const ITEM_RULE = 'must be an object {type, role, <type>: {url}}';
export const ITEM_TYPE_RULE = 'must be image_url, video_url or audio_url';

export const ROLES_BY_TYPE = {
  image_url: ['reference_image', 'first_frame', 'last_frame'],
  video_url: ['reference_video'],
  audio_url: ['reference_audio'],
} as const;

type ItemType = keyof typeof ROLES_BY_TYPE;
export type ContentItem = { type: ItemType; role: string } & Partial<Record<ItemType, { url: string }>>;

/** text2video (no references), image2video (a first frame, references or not) or reference2video (references only). */
export type VidgenAction = 'text2video' | 'image2video' | 'reference2video';

function readItem(value: unknown, index: number): ContentItem {
  const at = `${PARAM}.${index}`;
  if (!isPlainObject(value)) refuse(at, ITEM_RULE);
  const type = value.type;
  if (typeof type !== 'string' || !Object.hasOwn(ROLES_BY_TYPE, type)) refuse(`${at}.type`, ITEM_TYPE_RULE);
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
  if (has('reference_video') && !caps.referenceVideo) refuse(PARAM, `reference video input works only on the 2.x models, not ${model}`);
  if ((has('first_frame') || has('last_frame')) && !caps.frames) refuse(PARAM, `${model} has no start/end frames; give images the role reference_image`);
}

function checkFrames(items: readonly ContentItem[]): void {
  const count = (role: string) => items.filter((i) => i.role === role).length;
  const first = count('first_frame');
  const last = count('last_frame');
  if (first > 1 || last > 1) refuse(PARAM, 'at most one first_frame and one last_frame');
  if (last === 1 && first === 0) refuse(PARAM, 'a last_frame needs a first_frame');
}

/** The checked items and the action they make; an empty or absent list is text-to-video. */
export function readContent(value: unknown, model: string, caps: VidgenCapabilities): { items: ContentItem[]; action: VidgenAction } {
  if (value === undefined || value === null) return { items: [], action: 'text2video' };
  if (!Array.isArray(value)) refuse(PARAM, CONTENT_ARRAY_RULE);
  const items = value.map(readItem);
  const counts = {
    images: items.filter((i) => i.type === 'image_url').length,
    videos: items.filter((i) => i.type === 'video_url').length,
    audio: items.filter((i) => i.type === 'audio_url').length,
  };
  checkReferenceCounts(PARAM, counts);
  if (counts.audio > 0 && counts.images === 0 && counts.videos === 0)
    refuse(PARAM, 'audio-only references are not accepted; add an image or a video reference');
  checkCapabilities(model, caps, items);
  checkFrames(items);
  if (items.length === 0) return { items, action: 'text2video' };
  return { items, action: items.some((i) => i.role === 'first_frame') ? 'image2video' : 'reference2video' };
}
