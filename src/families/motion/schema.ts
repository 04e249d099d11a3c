/**
 * The motion routes' declared contract (spec 4.15, 2.8): the body of each submit path and the
 * answers. Each path takes its own models; the text-to-video path takes no image input (each
 * image field is refused by name there). `seconds` is read, and checked, only when `duration` is
 * absent. What depends on other fields stays with the rules (request.ts, media.ts): a prompt
 * for text-to-video here or as `metadata.input.prompt`, the fallbacks in `metadata.input` /
 * `metadata.parameters` (read, with these fields' schemas, only where no flat field overrides
 * them), which frame field wins, a last frame only after a first, some image input on the
 * image-to-video path, `size` against `resolution`, and the bounds of the forwarded `metadata`.
 */
import { z } from 'zod';
import {
  absent,
  ABSENT_OR_NULL,
  bool,
  httpUrl,
  int,
  integerRangePattern,
  integerRangeSource,
  jsonBody,
  NON_BLANK,
  object,
  optionalString,
  WHITE_SPACE,
  wholeSeconds,
  withAlias,
} from '../kit/schema.js';
import { MAX_PROMPT_CHARS } from '../kit/fields.js';
import { motionImageModels, motionTextModels } from './catalog.js';
import { MOTION_TIERS, parseMotionSize, tierName, tierOfPixels } from './sizes.js';

export type MotionPath = 'text' | 'image';
export const MOTION_DEFAULT_SECONDS = 5;
export const MOTION_MAX_SECONDS = 3600;
const SEED_MAX = 2_147_483_647;
const RATIO = /^\d{1,2}:\d{1,2}$/;
const RATIO_RULE = 'must be an aspect ratio such as 16:9, 9:16 or 1:1';
const SIZE_RULE = 'must be a size such as 1280*720 or a resolution 480P, 720P, 1080P';
const RESOLUTION_RULE = 'must be 480P, 720P or 1080P';
const TOO_LARGE_RULE = 'is larger than 1080P (1920*1080)';
export const MEDIA_TYPES = ['image', 'video', 'audio'] as const;
const IMAGES_RULE = 'must be an array of image URLs: the first frame, then the last frame';
const MEDIA_RULE = 'must be an array of {type, url} references';
const MEDIA_ITEM_RULE = 'must be an object {type, url}';
const NOT_HERE = 'image and media inputs go to the image2video path';

/** The path's own models: another path's model is refused naming the value and the path's models. */
function model(path: MotionPath) {
  const models = path === 'text' ? motionTextModels : motionImageModels;
  const kind = path === 'text' ? 'text-to-video' : 'image-to-video';
  return z.enum(models, {
    error: (issue) => (absent(issue.input) ? 'required' : `${JSON.stringify(issue.input)} is not a ${kind} model here; use one of ${models.join(', ')}`),
  });
}

const SPACE = `[${WHITE_SPACE}]*`;
const TIER_SOURCE = `(?:480|720|1080)[pP]`;
/** `width*height` (parseMotionSize) with each side from 10 to `w` and `h`. */
const pixels = (w: number, h: number) => `${integerRangeSource(10, w)}${SPACE}[*xX\u00d7]${SPACE}${integerRangeSource(10, h)}`;
/**
 * The sizes the document names: a tier in any case, or a pixel size within 1920*1080, 1080*1920 or
 * 1440*1440 (each holds at most 1080P's area). Narrower than the check (any size whose area 1080P
 * holds, e.g. 2000*1000): a pattern cannot say a product.
 */
const SIZE_PATTERN = `^${SPACE}(?:${TIER_SOURCE}|${pixels(1920, 1080)}|${pixels(1080, 1920)}|${pixels(1440, 1440)})${SPACE}$`;

/** A tier, or a pixel size no larger than 1080P (mapped to its tier). */
export const MotionSize = z
  .string({ error: SIZE_RULE })
  .superRefine((text, ctx) => {
    if (tierName(text)) return;
    const pixels = parseMotionSize(text);
    if (!pixels) ctx.addIssue({ code: 'custom', message: SIZE_RULE });
    else if (!tierOfPixels(pixels.width, pixels.height)) ctx.addIssue({ code: 'custom', message: TOO_LARGE_RULE });
  })
  .nullish()
  .meta({ pattern: SIZE_PATTERN, description: 'a pixel size such as 1280*720 (billed at the tier that holds it) or a resolution; default: reserved at 1080P' });

export const MotionResolution = z
  .string({ error: RESOLUTION_RULE })
  .refine((text) => tierName(text) !== undefined, RESOLUTION_RULE)
  .nullish()
  .meta({ pattern: `^${SPACE}${TIER_SOURCE}${SPACE}$`, description: `${MOTION_TIERS.join(', ')} (any case); the same tier as size when both are given` });

export const MotionSeconds = wholeSeconds(1, MOTION_MAX_SECONDS);

const metadata = object({
  input: object().meta({ description: "the base of the upstream's input: the flat fields override it (prompt is checked)" }),
  parameters: object().meta({ description: "the base of the upstream's parameters: the flat fields override it (size, resolution and duration are checked)" }),
}).meta({ description: 'forwarded upstream as the native request' });

const mediaItem = z.looseObject(
  { type: z.enum(MEDIA_TYPES, { error: `must be one of ${MEDIA_TYPES.join(', ')}` }), url: httpUrl() },
  { error: MEDIA_ITEM_RULE },
);

/** The image inputs of the image-to-video path, in the order the rules read them. */
const imageInputs = {
  images: z
    .array(httpUrl(), { error: IMAGES_RULE })
    .nullish()
    .meta({ description: 'the first frame, then the last frame (further items are checked, not sent)' }),
  first_frame_url: httpUrl().nullish(),
  img_url: httpUrl().nullish(),
  image_url: httpUrl().nullish(),
  image: httpUrl().nullish().meta({ description: 'the first frame (or img_url, image_url, first_frame_url, images[0]: once)' }),
  last_frame_url: httpUrl().nullish().meta({ description: 'the last frame (or images[1]): needs a first frame' }),
  media: z.array(mediaItem, { error: MEDIA_RULE }).nullish().meta({ description: 'references; a video makes it a reference-video task' }),
  audio_url: httpUrl().nullish(),
};

/** The image inputs on the text-to-video path: none (each is refused by name). */
const noImageInputs = Object.fromEntries(
  Object.keys(imageInputs).map((key) => [key, z.null({ error: NOT_HERE }).optional().meta({ description: NOT_HERE })]),
) as Record<keyof typeof imageInputs, z.ZodOptional<z.ZodNull>>;

/** What both paths take after their inputs, in the order the rules read it. */
const parameters = {
  duration: MotionSeconds.meta({ description: `default ${MOTION_DEFAULT_SECONDS}` }),
  seconds: z
    .unknown()
    .optional()
    .meta({
      anyOf: [{ type: 'integer' }, { type: 'string' }],
      description: `the same as duration, read only when duration is absent (1 to ${MOTION_MAX_SECONDS})`,
    }),
  size: MotionSize,
  resolution: MotionResolution,
  ratio: z.string({ error: RATIO_RULE }).regex(RATIO, RATIO_RULE).nullish(),
  prompt_extend: bool(),
  watermark: bool(),
  audio: bool(),
  seed: int(0, SEED_MAX),
};

const NON_BLANK_TEXT = { type: 'string', pattern: NON_BLANK.source, maxLength: MAX_PROMPT_CHARS };

/** `seconds` as the alias of `duration` (withAlias): checked as duration only when duration is absent. */
const SECONDS_ALIAS = [
  { required: ['duration'], properties: { duration: { anyOf: [{ type: 'integer' }, { type: 'string' }] } } },
  {
    properties: {
      seconds: {
        anyOf: [
          { type: 'integer', minimum: 1, maximum: MOTION_MAX_SECONDS },
          { type: 'string', pattern: integerRangePattern(1, MOTION_MAX_SECONDS).source },
          ABSENT_OR_NULL,
        ],
      },
    },
  },
];

/** The text-to-video prompt (request.ts): here, or as metadata.input.prompt when it is absent. */
const TEXT_PROMPT = [
  { required: ['prompt'], properties: { prompt: NON_BLANK_TEXT } },
  {
    required: ['metadata'],
    properties: {
      prompt: ABSENT_OR_NULL,
      metadata: {
        type: 'object',
        required: ['input'],
        properties: { input: { type: 'object', required: ['prompt'], properties: { prompt: NON_BLANK_TEXT } } },
      },
    },
  },
];

/** The fields a first frame may come in, and whether each holds one, as JSON Schema. */
const FIRST_FRAME = [
  ...(['first_frame_url', 'img_url', 'image_url', 'image'] as const).map((key) => ({ required: [key], properties: { [key]: { type: 'string' } } })),
  { required: ['images'], properties: { images: { type: 'array', minItems: 1 } } },
];

/**
 * Each frame given once (media.ts refuses one given in two fields with different values): the
 * document says in one field only, as a schema cannot compare values.
 */
const FRAMES_ONCE = [
  ...FIRST_FRAME.flatMap((a, i) =>
    FIRST_FRAME.slice(i + 1).map((b) => ({ required: [...a.required, ...b.required], properties: { ...a.properties, ...b.properties } })),
  ),
  { required: ['last_frame_url', 'images'], properties: { last_frame_url: { type: 'string' }, images: { type: 'array', minItems: 2 } } },
];

/** Some image input (media.ts): a first frame in one of its fields, or media without a last frame. */
const IMAGE_INPUT = [...FIRST_FRAME, { required: ['media'], properties: { media: { type: 'array', minItems: 1 }, last_frame_url: ABSENT_OR_NULL } }];

export const MotionTextBody = withAlias(
  'duration',
  'seconds',
  MotionSeconds,
  jsonBody({
    model: model('text'),
    metadata,
    prompt: optionalString().meta({ description: 'required (here or as metadata.input.prompt)' }),
    negative_prompt: optionalString(),
    ...noImageInputs,
    ...parameters,
  }).meta({ allOf: [{ anyOf: SECONDS_ALIAS }, { anyOf: TEXT_PROMPT }] }),
);

export const MotionImageBody = withAlias(
  'duration',
  'seconds',
  MotionSeconds,
  jsonBody({
    model: model('image'),
    metadata,
    prompt: optionalString(),
    negative_prompt: optionalString(),
    ...imageInputs,
    ...parameters,
  }).meta({ allOf: [{ anyOf: SECONDS_ALIAS }, { anyOf: IMAGE_INPUT }, { not: { anyOf: FRAMES_ONCE } }] }),
);

export const MOTION_BODIES = { text: MotionTextBody, image: MotionImageBody } as const;
export type MotionTextRequest = z.output<typeof MotionTextBody>;
export type MotionImageRequest = z.output<typeof MotionImageBody>;

export const MotionSubmitAnswer = z.object({
  request_id: z.string().meta({ description: "this request's id" }),
  output: z.object({ task_id: z.string(), task_status: z.literal('PENDING') }),
  code: z.string().meta({ description: 'empty on success' }),
  message: z.string().meta({ description: 'empty on success' }),
});

const time = (description: string) =>
  z
    .string()
    .optional()
    .meta({ description: `${description}: YYYY-MM-DD HH:mm:ss.SSS (UTC)` });

export const MotionTaskAnswer = z.object({
  request_id: z.string().meta({ description: "this request's id" }),
  output: z.object({
    task_id: z.string(),
    task_status: z.enum(['PENDING', 'RUNNING', 'SUCCEEDED', 'FAILED']),
    submit_time: z.string().meta({ description: 'YYYY-MM-DD HH:mm:ss.SSS (UTC)' }),
    scheduled_time: time('when it started'),
    end_time: time('when it ended'),
    video_url: z.string().optional().meta({ description: "SUCCEEDED: the gateway's signed URL, removed when the video expires" }),
    code: z.string().optional().meta({ description: 'FAILED: why' }),
    message: z.string().optional(),
  }),
  usage: z
    .object({ video_duration: z.number(), video_count: z.number(), SR: z.number().optional().meta({ description: 'the resolution delivered, e.g. 720' }) })
    .optional()
    .meta({ description: 'SUCCEEDED: what was delivered' }),
});

export type MotionTaskBody = z.infer<typeof MotionTaskAnswer>;
export type MotionSubmitBody = z.infer<typeof MotionSubmitAnswer>;
