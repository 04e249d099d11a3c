/**
 * The image-to-video inputs of a motion request (spec 4.15), over fields the schema checked:
 * the first frame from `image`, `img_url`, `image_url`, `first_frame_url` or `images[0]`
 * (once); the last frame from `last_frame_url` or `images[1]`; `media` references
 * `{type: image|video|audio, url}` (a video makes it a reference-video request); `audio_url`.
 * The spec sets no count on `images` or `media` and does not keep frames from media, so neither
 * does the gateway: `images` beyond the first two are checked but not sent (the native request
 * has no place for them), and what an upstream cannot combine it refuses itself. What is kept
 * (docs/decisions/0036-motion.md): one first and one last frame, a last frame only after a first, and some
 * image input on the image-to-video path.
 */
import { oneOf, refuse } from '../kit/fields.js';
import type { MEDIA_TYPES, MotionImageRequest } from './schema.js';

export type MediaItem = { type: (typeof MEDIA_TYPES)[number]; url: string };

export interface ImageInputs {
  first?: string;
  last?: string;
  media: MediaItem[];
  audioUrl?: string;
}

const or = (value: string | null | undefined) => value ?? undefined;

export function imageInputsOf(body: MotionImageRequest): ImageInputs {
  const images = body.images ?? [];
  const first = oneOf('image', 'first frame (image, img_url, image_url, first_frame_url, images[0])', [
    or(body.first_frame_url),
    or(body.img_url),
    or(body.image_url),
    or(body.image),
    images[0],
  ]);
  const last = oneOf('last_frame_url', 'last frame (last_frame_url, images[1])', [or(body.last_frame_url), images[1]]);
  const media = (body.media ?? []).map((item): MediaItem => ({ type: item.type, url: item.url }));
  const audioUrl = or(body.audio_url);
  if (last !== undefined && first === undefined) refuse('last_frame_url', 'a last frame needs a first frame');
  if (first === undefined && media.length === 0)
    refuse('image', 'image-to-video needs a first frame (image, img_url, image_url, first_frame_url or images) or media');
  return { ...(first !== undefined ? { first } : {}), ...(last !== undefined ? { last } : {}), media, ...(audioUrl !== undefined ? { audioUrl } : {}) };
}
