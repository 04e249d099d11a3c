/**
 * The `pro-image` model's rules, shared by the async route (spec 4.9) and the synchronous
 * images route (4.5, 4.6): `image` or `images` (URLs or Base64 data URIs) for image-to-image,
 * `n` 1–128 (default 1), and the OpenAI-style options.
 */
import { type Body, type FamilyDraft, parsePixelSize, readEnum, readInt, readRef, readRefList, readString, refuse, field } from './fields.js';

export const PRO_IMAGE_MAX_REFERENCES = 16;
export const PRO_IMAGE_MAX_N = 128;
export const PRO_IMAGE_USER_MAX = 256;

export const PRO_IMAGE_QUALITIES = ['low', 'medium', 'high', 'auto'] as const;
export const PRO_IMAGE_BACKGROUNDS = ['transparent', 'opaque', 'auto', 'none'] as const;
export const PRO_IMAGE_OUTPUT_FORMATS = ['png', 'jpeg', 'webp'] as const;
export const PRO_IMAGE_MODERATIONS = ['auto', 'low', 'high'] as const;

/** Why a `size` is refused: neither `auto` nor a pixel size. */
export const PRO_IMAGE_SIZE_RULE = 'must be auto or <width>x<height> with positive integers, e.g. 1024x1024, 1536x1024, 1024x1536';

export function isProImageSize(size: unknown): size is string {
  return size === 'auto' || (typeof size === 'string' && parsePixelSize(size) !== undefined);
}

function readSize(body: Body): string | undefined {
  const size = field(body, 'size');
  if (size === undefined) return undefined;
  if (isProImageSize(size)) return size;
  return refuse('size', PRO_IMAGE_SIZE_RULE);
}

export function proImageRules(body: Body, model: string, prompt: string): FamilyDraft {
  const image = readRef(body, 'image', 'url-or-data');
  const images = readRefList(body, 'images', 'url-or-data', PRO_IMAGE_MAX_REFERENCES);
  if (image !== undefined && images !== undefined) refuse('image', 'give either image or images, not both');
  const n = readInt(body, 'n', 1, PRO_IMAGE_MAX_N) ?? 1;
  const size = readSize(body);
  const quality = readEnum(body, 'quality', PRO_IMAGE_QUALITIES);
  const background = readEnum(body, 'background', PRO_IMAGE_BACKGROUNDS);
  const outputFormat = readEnum(body, 'output_format', PRO_IMAGE_OUTPUT_FORMATS);
  const moderation = readEnum(body, 'moderation', PRO_IMAGE_MODERATIONS);
  const user = readString(body, 'user', { minLength: 0, maxLength: PRO_IMAGE_USER_MAX });

  const upstream: Record<string, unknown> = { model, prompt };
  if (image !== undefined) upstream.image = image;
  if (images !== undefined) upstream.images = images;
  upstream.n = n;
  if (size !== undefined) upstream.size = size;
  if (quality !== undefined) upstream.quality = quality;
  if (background !== undefined) upstream.background = background;
  if (outputFormat !== undefined) upstream.output_format = outputFormat;
  if (moderation !== undefined) upstream.moderation = moderation;
  if (user !== undefined) upstream.user = user;
  return { action: image !== undefined || images !== undefined ? 'edit' : 'generate', units: n, upstream };
}
