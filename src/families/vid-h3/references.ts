/**
 * The media of a Vid-H3 request (spec 4.13): frame images (`input_reference`, `image`,
 * `images`, `metadata.first_frame_image` / `last_frame_image`) and the multimodal
 * `metadata.content` (`{type:'text', text}` and `{type:'reference_image'|'reference_video'|
 * 'reference_audio', url}`). The first frame may come from any of its fields but only once;
 * frames and reference media never mix (spec 4.13). Reference counts are those of limits 8;
 * audio references may go with the text alone (the audio-only rule of 4.3 is vidgen's).
 */
import { type Body, checkLength, checkReferenceCounts, field, isPlainObject, MAX_PROMPT_CHARS, oneOf, readHttpUrl, refuse } from '../kit/fields.js';
import { UploadedFile } from './multipart.js';

export const VID_H3_MAX_FRAME_IMAGES = 2;

export type ContentItem = { type: 'text'; text: string } | { type: 'reference_image' | 'reference_video' | 'reference_audio'; url: string };

export interface Frames {
  first?: string;
  last?: string;
}

export const MEDIA_TYPES = ['reference_image', 'reference_video', 'reference_audio'] as const;

export const IMAGES_RULE = `must be an array of at most ${VID_H3_MAX_FRAME_IMAGES} image URLs: the first frame, then the last frame`;
export const CONTENT_RULE = 'must be an array of text and reference items';
export const ITEM_RULE = 'must be an object {type, text} or {type, url}';
export const ITEM_TYPE_RULE = `must be text, ${MEDIA_TYPES.join(', ')}`;

/** `input_reference`: a URL, or the openai client's `{image_url}` object; uploaded files are refused. */
function readInputReference(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (value instanceof UploadedFile) refuse('input_reference', 'file uploads are not accepted; give the first-frame image as a URL (or {image_url})');
  if (isPlainObject(value)) return readHttpUrl(value.image_url, 'input_reference.image_url');
  return readHttpUrl(value, 'input_reference');
}

/** `images`: at most two frame URLs (spec 4.13); an empty array gives no frame. */
function readImages(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.length > VID_H3_MAX_FRAME_IMAGES) {
    refuse('images', IMAGES_RULE);
  }
  return value.map((url: unknown, i) => readHttpUrl(url, `images.${i}`));
}

export function readFrames(body: Body, metadata: Body): Frames {
  const images = readImages(field(body, 'images'));
  const optionalUrl = (value: unknown, param: string) => (value === undefined || value === null ? undefined : readHttpUrl(value, param));
  const first = oneOf('image', 'first frame (input_reference, image, images[0], metadata.first_frame_image)', [
    readInputReference(field(body, 'input_reference')),
    optionalUrl(field(body, 'image'), 'image'),
    images[0],
    optionalUrl(field(metadata, 'first_frame_image'), 'metadata.first_frame_image'),
  ]);
  const last = oneOf('images', 'last frame (images[1], metadata.last_frame_image)', [
    images[1],
    optionalUrl(field(metadata, 'last_frame_image'), 'metadata.last_frame_image'),
  ]);
  if (last !== undefined && first === undefined) refuse('metadata.last_frame_image', 'a last frame needs a first frame');
  return { ...(first !== undefined ? { first } : {}), ...(last !== undefined ? { last } : {}) };
}

function readItem(value: unknown, index: number): ContentItem {
  const at = `metadata.content.${index}`;
  if (!isPlainObject(value)) refuse(at, ITEM_RULE);
  if (value.type === 'text') {
    if (typeof value.text !== 'string' || value.text.trim() === '') refuse(`${at}.text`, 'must be a non-empty string');
    checkLength(value.text, `${at}.text`, MAX_PROMPT_CHARS);
    return { type: 'text', text: value.text };
  }
  const type = MEDIA_TYPES.find((t) => t === value.type);
  if (!type) refuse(`${at}.type`, ITEM_TYPE_RULE);
  return { type, url: readHttpUrl(value.url, `${at}.url`) };
}

export function readContent(metadata: Body): { text?: string; media: ContentItem[] } {
  const value = field(metadata, 'content');
  if (value === undefined) return { media: [] };
  if (!Array.isArray(value)) refuse('metadata.content', CONTENT_RULE);
  const items = value.map(readItem);
  const texts = items.filter((i) => i.type === 'text');
  // The spec's request has one text (`prompt` or "a text item"); the text-only and frame modes send it as `prompt`.
  if (texts.length > 1) refuse('metadata.content', 'at most one text item');
  const media = items.filter((i) => i.type !== 'text');
  checkReferenceCounts('metadata.content', {
    images: media.filter((i) => i.type === 'reference_image').length,
    videos: media.filter((i) => i.type === 'reference_video').length,
    audio: media.filter((i) => i.type === 'reference_audio').length,
  });
  const text = texts[0];
  return { ...(text?.type === 'text' ? { text: text.text } : {}), media };
}
