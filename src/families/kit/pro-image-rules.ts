/**
 * The `pro-image` model's fields and rules, shared by the async route (spec 4.9) and the
 * synchronous images route (4.5, 4.6): `image` or `images` (URLs or Base64 data URIs) for
 * image-to-image, `n` 1–128 (default 1), and the OpenAI-style options. The fields are declared
 * here once (the schemas of both routes spread them); `proImageDraft` decides what is left.
 */
import { z } from 'zod';
import { type FamilyDraft, parsePixelSize, refuse } from './fields.js';
import { boundedString, int, oneOf, ref, refList } from './schema.js';

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

/** The references that make a pro-image task image-to-image (the async route takes them). */
export const proImageReferences = {
  image: ref('url-or-data').meta({ description: 'one reference image (not with images): an http/https URL or a data:image/<format>;base64,<data> URI' }),
  images: refList('url-or-data', PRO_IMAGE_MAX_REFERENCES).meta({ description: `1 to ${PRO_IMAGE_MAX_REFERENCES} reference images (not with image)` }),
};

/** The options of 4.5, in the order the rules read them. */
export const proImageOptions = {
  n: int(1, PRO_IMAGE_MAX_N).meta({ description: 'images to make, default 1' }),
  size: z
    .string({ error: PRO_IMAGE_SIZE_RULE })
    .refine(isProImageSize, PRO_IMAGE_SIZE_RULE)
    .nullish()
    .meta({ pattern: '^(?:auto|[1-9][0-9]{0,4}x[1-9][0-9]{0,4})$', description: 'auto or <width>x<height>, e.g. 1024x1024, 1536x1024, 1024x1536' }),
  quality: oneOf(PRO_IMAGE_QUALITIES),
  background: oneOf(PRO_IMAGE_BACKGROUNDS),
  output_format: oneOf(PRO_IMAGE_OUTPUT_FORMATS),
  moderation: oneOf(PRO_IMAGE_MODERATIONS),
  user: boundedString({ minLength: 0, maxLength: PRO_IMAGE_USER_MAX }).meta({ description: 'an end-user id, forwarded' }),
};

type Fields = typeof proImageReferences & typeof proImageOptions;

/** The pro-image fields as the schema parses them (`null`: omitted). */
export type ProImageFields = Partial<{ [K in keyof Fields]: z.output<Fields[K]> }>;

/** What the fields leave to decide: one of image and images, the defaults, the upstream body. */
export function proImageDraft(fields: ProImageFields, model: string, prompt: string): FamilyDraft {
  const image = fields.image ?? undefined;
  const images = fields.images ?? undefined;
  if (image !== undefined && images !== undefined) refuse('image', 'give either image or images, not both');
  const n = fields.n ?? 1;

  const upstream: Record<string, unknown> = { model, prompt };
  if (image !== undefined) upstream.image = image;
  if (images !== undefined) upstream.images = images;
  upstream.n = n;
  for (const key of ['size', 'quality', 'background', 'output_format', 'moderation', 'user'] as const) {
    const value = fields[key] ?? undefined;
    if (value !== undefined) upstream[key] = value;
  }
  return { action: image !== undefined || images !== undefined ? 'edit' : 'generate', units: n, upstream };
}
