/**
 * The list rules of `metadata.content` in a vidgen request (spec 4.3 rules 1–2), over items the
 * schema checked one by one (schema.ts: `{type, role, <type>: {url}}`, image_url / video_url /
 * audio_url). Only what the spec refuses is refused, plus the frame rules a video cannot do
 * otherwise (one first and one last frame; a last frame after a first one; docs/decisions/0033-vidgen.md and
 * docs/decisions/0032-video-rules-refuse-only-what-the-spec-refuses.md).
 * Frames may go with reference media: the spec names no such limit, and an upstream that cannot
 * mix them refuses the task itself.
 */
import { checkReferenceCounts, refuse } from '../kit/fields.js';
import type { VidgenCapabilities } from './models.js';
import type { ROLES_BY_TYPE, VidgenContentItem } from './schema.js';

const PARAM = 'metadata.content';

type ItemType = keyof typeof ROLES_BY_TYPE;
export type ContentItem = { type: ItemType; role: string } & Partial<Record<ItemType, { url: string }>>;

/** text2video (no references), image2video (a first frame, references or not) or reference2video (references only). */
export type VidgenAction = 'text2video' | 'image2video' | 'reference2video';

/** The item as sent upstream: its type, role and URL only. */
function upstreamItem(item: VidgenContentItem): ContentItem {
  switch (item.type) {
    case 'image_url':
      return { type: item.type, role: item.role, image_url: { url: item.image_url.url } };
    case 'video_url':
      return { type: item.type, role: item.role, video_url: { url: item.video_url.url } };
    case 'audio_url':
      return { type: item.type, role: item.role, audio_url: { url: item.audio_url.url } };
  }
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

/** The items as sent upstream and the action they make; an empty or absent list is text-to-video. */
export function contentPlan(
  checked: readonly VidgenContentItem[] | null | undefined,
  model: string,
  caps: VidgenCapabilities,
): { items: ContentItem[]; action: VidgenAction } {
  const items = (checked ?? []).map(upstreamItem);
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
