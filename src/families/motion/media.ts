/**
 * The image-to-video inputs of a motion request (spec 4.15): the first frame from `image`,
 * `img_url`, `image_url`, `first_frame_url` or `images[0]` (once); the last frame from
 * `last_frame_url` or `images[1]`; `media` references `{type: image|video|audio, url}` (a video
 * makes it a reference-video request); `audio_url`. Frames and media do not mix.
 */
import { type Body, checkReferenceCounts, field, isOneOf, isPlainObject, oneOf, readHttpUrl, refuse } from '../video-common.js';

export const MOTION_MAX_IMAGES = 2;
const MEDIA_TYPES = ['image', 'video', 'audio'] as const;

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

function readImages(body: Body): string[] {
  const value = field(body, 'images');
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length === 0 || value.length > MOTION_MAX_IMAGES) {
    refuse('images', `must be an array of 1 to ${MOTION_MAX_IMAGES} image URLs: the first frame, then the last frame`);
  }
  return value.map((url: unknown, i) => readHttpUrl(url, `images.${i}`));
}

function readMedia(body: Body): MediaItem[] {
  const value = field(body, 'media');
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length === 0) refuse('media', 'must be a non-empty array of {type, url} references');
  const items = value.map((item: unknown, i): MediaItem => {
    if (!isPlainObject(item)) refuse(`media.${i}`, 'must be an object {type, url}');
    if (!isOneOf(MEDIA_TYPES, item.type)) refuse(`media.${i}.type`, `must be one of ${MEDIA_TYPES.join(', ')}`);
    return { type: item.type, url: readHttpUrl(item.url, `media.${i}.url`) };
  });
  const count = (type: MediaItem['type']) => items.filter((i) => i.type === type).length;
  checkReferenceCounts('media', { images: count('image'), videos: count('video'), audio: count('audio') });
  return items;
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
  if (first !== undefined && media.length > 0) refuse('media', 'frame images cannot be mixed with media references');
  if (first === undefined && media.length === 0) refuse('image', 'image-to-video needs a first frame (image, img_url, image_url, first_frame_url or images) or media');
  return { ...(first !== undefined ? { first } : {}), ...(last !== undefined ? { last } : {}), media, ...(audioUrl !== undefined ? { audioUrl } : {}) };
}
