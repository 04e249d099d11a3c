/**
 * The Vid-H3 routes' declared contract (spec 4.13, 2.4): the submit body, the video object and
 * the content download. The body is a JSON object or the openai client's multipart form, which
 * multipart.ts decodes into the same shape before validation: every form value is a string, so
 * what is a number or a boolean in JSON is also accepted as its text here. What depends on other
 * fields stays with the rules (request.ts, references.ts): the resolution given more than once,
 * which frame field wins and a last frame only after a first, frames mixed with references, the
 * text a request needs (a prompt or a text item), and the counts of references.
 */
import { z } from 'zod';
import { isPlainObject, MAX_PROMPT_CHARS } from '../kit/fields.js';
import { callbackUrl, HTTP_URL_DOC, httpUrl, jsonBody, NON_BLANK, oneOf, onlyKeys, optionalString, WHITE_SPACE, wholeSeconds } from '../kit/schema.js';
import { UploadedFile } from './multipart.js';

export const VID_H3_MODEL = 'Vid-H3';
const VID_H3_MIN_SECONDS = 4;
const VID_H3_MAX_SECONDS = 15;
export const VID_H3_RESOLUTIONS = ['768P', '2K'] as const;
export type VidH3Resolution = (typeof VID_H3_RESOLUTIONS)[number];
const VID_H3_RATIOS = ['21:9', '16:9', '4:3', '1:1', '3:4', '9:16', 'adaptive'] as const;
const METADATA_KEYS = ['resolution', 'ratio', 'first_frame_image', 'last_frame_image', 'content', 'callback_url', 'aigc_watermark'] as const;
const PIXELS = /^\s*\d+\s*[x×*X]\s*\d+\s*$/;
const RESOLUTION_RULE = 'must be 768P or 2K';
const pixelsRule = (value: string) => `pixel dimensions such as ${value.trim()} are not accepted; use 768P or 2K`;
const VID_H3_MAX_FRAME_IMAGES = 2;
const MEDIA_TYPES = ['reference_image', 'reference_video', 'reference_audio'] as const;
const IMAGES_RULE = `must be an array of at most ${VID_H3_MAX_FRAME_IMAGES} image URLs: the first frame, then the last frame`;
const CONTENT_RULE = 'must be an array of text and reference items';
const ITEM_RULE = 'must be an object {type, text} or {type, url}';
const ITEM_TYPE_RULE = `must be text, ${MEDIA_TYPES.join(', ')}`;
const HTTP_URL_RULE = 'must be an http or https URL';

/** A `metadata.content` item as the schema lets it through. */
export type ContentItem = { type: 'text'; text: string } | { type: (typeof MEDIA_TYPES)[number]; url: string };

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
    .meta({
      // A tier in any case, white space around it (a pixel size is never one).
      pattern: `^[${WHITE_SPACE}]*(?:768[pP]|2[kK])[${WHITE_SPACE}]*$`,
      description: `${VID_H3_RESOLUTIONS.join(' or ')} (any case), default 768P; give it in one place, or the same everywhere`,
    });

const ITEM_TYPES: readonly unknown[] = ['text', ...MEDIA_TYPES];
const isUrl = httpUrl();

/**
 * `metadata.content`: an array of objects of a known type, checked in place. A form's array may
 * have holes (`metadata[content][1]` without `[0]`), which are skipped: an array schema would
 * visit them, and hand the rules a copy without them. The item's type decides whether it holds a
 * text or a URL; the counts are the rules'.
 */
const content = z
  .custom<ContentItem[] | null>()
  .superRefine((value, ctx) => {
    if (value === null) return;
    if (!Array.isArray(value)) {
      ctx.addIssue({ code: 'custom', message: CONTENT_RULE });
      return;
    }
    value.forEach((item: unknown, index) => {
      if (!isPlainObject(item)) ctx.addIssue({ code: 'custom', path: [index], message: ITEM_RULE });
      else if (!ITEM_TYPES.includes(item.type)) ctx.addIssue({ code: 'custom', path: [index, 'type'], message: ITEM_TYPE_RULE });
      else if (item.type !== 'text') {
        if (!isUrl.safeParse(item.url).success) ctx.addIssue({ code: 'custom', path: [index, 'url'], message: HTTP_URL_RULE });
      } else if (typeof item.text !== 'string' || item.text.trim() === '') {
        ctx.addIssue({ code: 'custom', path: [index, 'text'], message: 'must be a non-empty string' });
      } else if (item.text.length > MAX_PROMPT_CHARS) {
        ctx.addIssue({ code: 'custom', path: [index, 'text'], message: `must be at most ${MAX_PROMPT_CHARS} characters, got ${item.text.length}` });
      }
    });
  })
  .optional()
  .meta({
    type: 'array',
    description: 'multi-reference: at most 9 images, 3 videos and 3 audio, and one text item; not with frame images',
    items: {
      oneOf: [
        {
          type: 'object',
          required: ['type', 'text'],
          properties: {
            type: { type: 'string', enum: ['text'] },
            text: { type: 'string', pattern: NON_BLANK.source, maxLength: MAX_PROMPT_CHARS, description: 'the prompt (then prompt may be omitted)' },
          },
        },
        {
          type: 'object',
          required: ['type', 'url'],
          properties: {
            type: { type: 'string', enum: MEDIA_TYPES },
            url: { ...HTTP_URL_DOC, description: 'an http/https URL' },
          },
        },
      ],
    },
  });

const WATERMARK_RULE = 'must be true or false';

const Metadata = formObject(
  onlyKeys(
    'metadata',
    METADATA_KEYS,
    z
      .looseObject(
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
      )
      .meta({ additionalProperties: false }),
  )
    .nullish()
    .meta({ description: `takes only ${METADATA_KEYS.join(', ')}` }),
);

/** `images`: its length first, then each item, checked in place as `metadata.content` (holes skipped). */
const images = z
  .custom<string[] | null>()
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
    items: HTTP_URL_DOC,
    description: 'the first frame, then the last frame',
  });

/** A text item of `metadata.content`, as JSON Schema. */
const TEXT_ITEM = { type: 'object', required: ['type'], properties: { type: { type: 'string', enum: ['text'] } } };

/**
 * The text every request needs (request.ts textOf): a prompt that is not blank, or a text item in
 * `metadata.content` (an array that does not hold only other items: OpenAPI 3.0 has no `contains`).
 */
const NEEDS_TEXT = [
  { required: ['prompt'], properties: { prompt: { type: 'string', pattern: NON_BLANK.source } } },
  {
    required: ['metadata'],
    properties: { metadata: { type: 'object', required: ['content'], properties: { content: { type: 'array', not: { items: { not: TEXT_ITEM } } } } } },
  },
];

export const VidH3Body = jsonBody({
  model: z.literal(VID_H3_MODEL, { error: `required, must be ${VID_H3_MODEL}` }),
  seconds: wholeSeconds(VID_H3_MIN_SECONDS, VID_H3_MAX_SECONDS).meta({ description: 'default 5' }),
  size: resolution(),
  resolution: resolution(),
  images,
  input_reference: z
    .custom<string | { image_url: string } | null>()
    .superRefine((value, ctx) => {
      if (value === null) return;
      if (value instanceof UploadedFile) {
        ctx.addIssue({ code: 'custom', message: 'file uploads are not accepted; give the first-frame image as a URL (or {image_url})' });
      } else if (isPlainObject(value)) {
        if (!isUrl.safeParse(value.image_url).success) ctx.addIssue({ code: 'custom', path: ['image_url'], message: HTTP_URL_RULE });
      } else if (!isUrl.safeParse(value).success) ctx.addIssue({ code: 'custom', message: HTTP_URL_RULE });
    })
    .optional()
    .meta({
      description: "the first frame: an http/https URL, or the openai client's {image_url}; uploaded files are refused",
      anyOf: [HTTP_URL_DOC, { type: 'object', required: ['image_url'], properties: { image_url: HTTP_URL_DOC } }],
    }),
  image: httpUrl().nullish().meta({ description: 'the first frame' }),
  prompt: optionalString().meta({ description: 'required unless metadata.content has a text item' }),
  // Last, though the rules check its keys first: they read most of its fields after the others.
  metadata: Metadata,
}).meta({ anyOf: NEEDS_TEXT });

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

export type VidH3Request = z.output<typeof VidH3Body>;
export type VidH3VideoBody = z.infer<typeof VideoObject>;

export const SubmitAnswer = VideoObject;
export const VideoAnswer = VideoObject;

export const ContentQuery = z.looseObject({
  variant: z.enum(['video'], { error: 'only video is available' }).optional().meta({ description: 'only video' }),
});

const LIMIT_RULE = 'must be an integer from 1 to 100';

/** `GET /v1/videos`: OpenAI's list parameters (its client's `videos.list`). */
export const ListQuery = z.looseObject({
  after: z
    .string({ error: 'must be a video id' })
    .regex(/^[\w-]{1,128}$/, 'must be a video id')
    .optional()
    .meta({ description: 'a video id from the previous page (its last_id): list the videos after it' }),
  limit: z.coerce
    .number({ error: LIMIT_RULE })
    .int(LIMIT_RULE)
    .min(1, LIMIT_RULE)
    .max(100, LIMIT_RULE)
    .default(20)
    .meta({ description: 'videos per page, 1 to 100, default 20' }),
  order: z
    .enum(['asc', 'desc'], { error: 'must be asc or desc' })
    .default('desc')
    .meta({ description: 'by created_at: desc (newest first, the default) or asc' }),
});

export type VidH3ListQuery = z.output<typeof ListQuery>;

export const ListAnswer = z.object({
  object: z.literal('list'),
  data: z.array(VideoObject),
  first_id: z.string().nullable().meta({ description: 'the id of the first video of the page; null when empty' }),
  last_id: z.string().nullable().meta({ description: "the id of the last video of the page (the next page's after); null when empty" }),
  has_more: z.boolean(),
});

/** The MP4 as it is stored: never serialised (a buffer is sent as it is); it only documents the answer. */
const mp4 = (description: string) => z.string().meta({ format: 'binary', description });

export const ContentAnswers = {
  200: mp4('the whole MP4'),
  206: mp4('the byte range asked for with Range (Content-Range names it)'),
};
