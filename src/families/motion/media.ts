/**
 * The image-to-video inputs of a motion request (spec 4.15): the first frame from `image`,
 * `img_url`, `image_url`, `first_frame_url` or `images[0]` (once); the last frame from
 * `last_frame_url` or `images[1]`; `media` references `{type: image|video|audio, url}` (a video
 * makes it a reference-video request); `audio_url`. The spec sets no count on `images` or
 * `media` and does not keep frames from media, so neither does the gateway: `images` beyond the
 * first two are checked but not sent (the native request has no place for them), and what an
 * upstream cannot combine it refuses itself. What is kept (docs/decisions/0036-motion.md): one first and one
 * last frame, a last frame only after a first, and some image input on the image-to-video path.
 */
import { type Body, field, isOneOf, isPlainObject, oneOf, readHttpUrl, refuse } from '../kit/fields.js';

/** `images` items that serve as frames: the first, then the last. */
export const MOTION_FRAME_IMAGES = 2;
export const MEDIA_TYPES = ['image', 'video', 'audio'] as const;
export const IMAGES_RULE = 'must be an array of image URLs: the first frame, then the last frame';
export const MEDIA_RULE = 'must be an array of {type, url} references';
export const MEDIA_ITEM_RULE = 'must be an object {type, url}';

export type MediaItem = { type: (typeof MEDIA_TYPES)[number]; url: string };

export interface ImageInputs {
  first?: string;
  last?: string;
  media: MediaItem[];
  audioUrl?: string;
}

const optionalUrl = (body: Body, key: string) => {
  const value = field(body, key);
  return value === undefined ? undefined : readHttpUrl(value, key);
};

/** Every item must be a URL; the first two are the frames. An empty array gives none. */
function readImages(body: Body): string[] {
  const value = field(body, 'images');
  if (value === undefined) return [];
  if (!Array.isArray(value)) refuse('images', IMAGES_RULE);
  return value.map((url: unknown, i) => readHttpUrl(url, `images.${i}`)).slice(0, MOTION_FRAME_IMAGES);
}

function readMedia(body: Body): MediaItem[] {
  const value = field(body, 'media');
  if (value === undefined) return [];
  if (!Array.isArray(value)) refuse('media', MEDIA_RULE);
  return value.map((item: unknown, i): MediaItem => {
    if (!isPlainObject(item)) refuse(`media.${i}`, MEDIA_ITEM_RULE);
    if (!isOneOf(MEDIA_TYPES, item.type)) refuse(`media.${i}.type`, `must be one of ${MEDIA_TYPES.join(', ')}`);
    return { type: item.type, url: readHttpUrl(item.url, `media.${i}.url`) };
  });
}

export function readImageInputs(body: Body): ImageInputs {
  const images = readImages(body);
  const first = oneOf('image', 'first frame (image, img_url, image_url, first_frame_url, images[0])', [
    optionalUrl(body, 'first_frame_url'),
    optionalUrl(body, 'img_url'),
    optionalUrl(body, 'image_url'),
    optionalUrl(body, 'image'),
    images[0],
  ]);
  const last = oneOf('last_frame_url', 'last frame (last_frame_url, images[1])', [optionalUrl(body, 'last_frame_url'), images[1]]);
  const media = readMedia(body);
  const audioUrl = optionalUrl(body, 'audio_url');
  if (last !== undefined && first === undefined) refuse('last_frame_url', 'a last frame needs a first frame');
  if (first === undefined && media.length === 0)
    refuse('image', 'image-to-video needs a first frame (image, img_url, image_url, first_frame_url or images) or media');
  return { ...(first !== undefined ? { first } : {}), ...(last !== undefined ? { last } : {}), media, ...(audioUrl !== undefined ? { audioUrl } : {}) };
}
