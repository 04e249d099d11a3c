/**
 * The Vid-H3 routes' declared contract (spec 4.13, 2.4): the submit body as the rules read it
 * (request.ts, references.ts: same fields, same words), the video object and the content
 * download. The body is a JSON object or the openai client's multipart form, which multipart.ts
 * decodes into the same shape before validation: every form value is a string, so what is a
 * number or a boolean in JSON is also accepted as its text here, as the rules accept it. What
 * depends on other fields (the resolution given twice, which frame field wins, frames mixed with
 * references, the text a request needs, the counts of references) stays with the rules.
 */
import { z } from 'zod';
import { isPlainObject } from '../kit/fields.js';
import { callbackUrl, httpUrl, jsonBody, oneOf, onlyKeys, optionalString, wholeSeconds } from '../kit/schema.js';
import { UploadedFile } from './multipart.js';
import { CONTENT_RULE, IMAGES_RULE, ITEM_RULE, ITEM_TYPE_RULE, MEDIA_TYPES, VID_H3_MAX_FRAME_IMAGES } from './references.js';
import {
  METADATA_KEYS,
  PIXELS,
  pixelsRule,
  RESOLUTION_RULE,
  VID_H3_MAX_SECONDS,
  VID_H3_MIN_SECONDS,
  VID_H3_MODEL,
  VID_H3_RATIOS,
  VID_H3_RESOLUTIONS,
} from './request.js';

/**
 * An object field of a body that may be a form: a file part where an object is expected is
 * refused as every other non-object is (the rules see it as such), not read as an object of its
 * properties, which the object schema would pass on to the rules in its stead.
 */
function formObject<T extends z.ZodType>(schema: T) {
  return z.preprocess((value) => (value instanceof UploadedFile ? 'a file' : value), schema);
}

/** `size`, `resolution` and `metadata.resolution`: a tier in any case; pixel sizes are refused by name. */
const resolution = () =>
  z
    .string({ error: RESOLUTION_RULE })
    .superRefine((value, ctx) => {
      if (PIXELS.test(value)) {
        ctx.addIssue({ code: 'custom', message: pixelsRule(value) });
      } else if (!(VID_H3_RESOLUTIONS as readonly string[]).includes(value.trim().toUpperCase())) {
        ctx.addIssue({ code: 'custom', message: RESOLUTION_RULE });
      }
    })
    .nullish()
    .meta({ description: `${VID_H3_RESOLUTIONS.join(' or ')} (any case), default 768P; give it in one place, or the same everywhere` });

const ITEM_TYPES: readonly unknown[] = ['text', ...MEDIA_TYPES];

/**
 * `metadata.content`: an array of objects of a known type, checked in place. A form's array may
 * have holes (`metadata[content][1]` without `[0]`), which the rules skip: an array schema would
 * visit them, and hand the rules a copy without them. The item's text or URL, which its type
 * decides, and the counts are the rules'.
 */
const content = z
  .unknown()
  .superRefine((value, ctx) => {
    if (value === null) return;
    if (!Array.isArray(value)) {
      ctx.addIssue({ code: 'custom', message: CONTENT_RULE });
      return;
    }
    value.forEach((item: unknown, index) => {
      if (!isPlainObject(item)) ctx.addIssue({ code: 'custom', path: [index], message: ITEM_RULE });
      else if (!ITEM_TYPES.includes(item.type)) ctx.addIssue({ code: 'custom', path: [index, 'type'], message: ITEM_TYPE_RULE });
    });
  })
  .optional()
  .meta({
    type: 'array',
    description: 'multi-reference: at most 9 images, 3 videos and 3 audio, and one text item; not with frame images',
    items: {
      type: 'object',
      required: ['type'],
      properties: {
        type: { type: 'string', enum: ITEM_TYPES },
        text: { type: 'string', description: 'type text: the prompt (then prompt may be omitted)' },
        url: { type: 'string', format: 'uri', description: 'the reference types: an http/https URL' },
      },
    },
  });

const WATERMARK_RULE = 'must be true or false';

const Metadata = formObject(
  onlyKeys(
    'metadata',
    METADATA_KEYS,
    z.looseObject(
      {
        resolution: resolution(),
        first_frame_image: httpUrl().nullish(),
        last_frame_image: httpUrl().nullish().meta({ description: 'needs a first frame' }),
        content,
        ratio: oneOf(VID_H3_RATIOS).meta({ description: 'default 16:9 for text only, else adaptive' }),
        aigc_watermark: z
          .union([z.boolean({ error: WATERMARK_RULE }), z.enum(['true', 'false'], { error: WATERMARK_RULE }), z.null()], { error: WATERMARK_RULE })
          .optional()
          .meta({ description: 'true or false (a form sends its text)' }),
        callback_url: callbackUrl(),
      },
      { error: 'must be an object' },
    ),
  )
    .nullish()
    .meta({ description: `takes only ${METADATA_KEYS.join(', ')}` }),
);

const isUrl = httpUrl();

/** `images`: its length first, then each item, checked in place as `metadata.content` (holes skipped). */
const images = z
  .unknown()
  .superRefine((value, ctx) => {
    if (value === null) return;
    if (!Array.isArray(value) || value.length > VID_H3_MAX_FRAME_IMAGES) {
      ctx.addIssue({ code: 'custom', message: IMAGES_RULE });
      return;
    }
    value.forEach((item: unknown, index) => {
      if (!isUrl.safeParse(item).success) ctx.addIssue({ code: 'custom', path: [index], message: 'must be an http or https URL' });
    });
  })
  .optional()
  .meta({
    type: 'array',
    maxItems: VID_H3_MAX_FRAME_IMAGES,
    items: { type: 'string', format: 'uri' },
    description: 'the first frame, then the last frame',
  });

export const VidH3Body = jsonBody({
  model: z.literal(VID_H3_MODEL, { error: `required, must be ${VID_H3_MODEL}` }),
  seconds: wholeSeconds(VID_H3_MIN_SECONDS, VID_H3_MAX_SECONDS).meta({ description: 'default 5' }),
  size: resolution(),
  resolution: resolution(),
  images,
  input_reference: z
    .unknown()
    .optional()
    .meta({
      description: "the first frame: an http/https URL, or the openai client's {image_url}; uploaded files are refused",
      anyOf: [
        { type: 'string', format: 'uri' },
        { type: 'object', required: ['image_url'], properties: { image_url: { type: 'string', format: 'uri' } } },
      ],
    }),
  image: httpUrl().nullish().meta({ description: 'the first frame' }),
  prompt: optionalString().meta({ description: 'required unless metadata.content has a text item' }),
  // Last, though the rules check its keys first: they read most of its fields after the others.
  metadata: Metadata,
});

const VideoObject = z.object({
  id: z.string().meta({ description: 'the task id' }),
  object: z.literal('video'),
  model: z.string(),
  status: z.enum(['queued', 'in_progress', 'completed', 'failed']),
  progress: z.number().meta({ description: '0 to 100' }),
  created_at: z.number().meta({ description: 'Unix seconds' }),
  completed_at: z.number().meta({ description: 'Unix seconds; 0 until the video completes or fails' }),
  expires_at: z.number().nullable().meta({ description: 'Unix seconds when the video is deleted; null until known' }),
  seconds: z.string().meta({ description: 'asked for until completed, then delivered' }),
  size: z.string().meta({ description: 'the resolution: asked for until completed, then delivered' }),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
});

export const SubmitAnswer = VideoObject;
export const VideoAnswer = VideoObject;

export const ContentQuery = z.looseObject({
  variant: z.enum(['video'], { error: 'only video is available' }).optional().meta({ description: 'only video' }),
});

/** The MP4 as it is stored: never serialised (a buffer is sent as it is); it only documents the answer. */
const mp4 = (description: string) => z.string().meta({ format: 'binary', description });

export const ContentAnswers = {
  200: mp4('the whole MP4'),
  206: mp4('the byte range asked for with Range (Content-Range names it)'),
};
