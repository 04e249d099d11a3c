/**
 * The clip routes' declared contract (spec 4.12, 2.5): the body of each submit path and the
 * answers. text2video requires a prompt and takes no frame images (each is refused by name, once
 * it is a well-formed image, as the path it belongs to); image2video requires the first frame.
 * The model comes from `model_name`, else from its compatibility alias `model` (checked first, as
 * the rules read it first). What depends on the model (clip-v2-master only in pro) and the
 * bounds of the forwarded `metadata` stay with the rules (request.ts).
 */
import { z } from 'zod';
import { isHttpUrl, isImageDataUri } from '../kit/fields.js';
import {
  ABSENT_OR_NULL,
  jsonBody,
  number,
  object,
  oneOf,
  optionalString,
  requiredOneOf,
  requiredText,
  urlOrDataUriPattern,
  withAlias,
  wholeSeconds,
} from '../kit/schema.js';
import { clipModels } from './catalog.js';

export type ClipAction = 'text2video' | 'image2video';
export const CLIP_ACTIONS: readonly ClipAction[] = ['text2video', 'image2video'];
export const CLIP_MODES = ['std', 'pro'] as const;
export const CLIP_DEFAULTS = { duration: 5, aspect_ratio: '1:1', cfg_scale: 0.5 } as const;
export const CLIP_MAX_DURATION = 3600;
/** Models that offer only the pro mode. */
export const CLIP_PRO_ONLY_MODELS: readonly string[] = ['clip-v2-master'];
const ASPECT_RATIO = /^\d{1,2}:\d{1,2}$/;
const ASPECT_RATIO_RULE = 'must be a ratio such as 16:9, 9:16 or 1:1';
const RAW_BASE64_SOURCE = '[A-Za-z0-9+/]+={0,2}';
const RAW_BASE64 = new RegExp(`^${RAW_BASE64_SOURCE}$`);
const FRAME_RULE = 'must be an image: an http/https URL, a data:image/<format>;base64,<data> URI or raw Base64';
const FRAME_DESCRIPTION = 'an http/https URL, a data:image/<format>;base64,<data> URI or raw Base64';

/** A frame image as the upstream takes it: a URL, a Base64 image data URI or raw Base64. */
function isFrameImage(text: string): boolean {
  return isHttpUrl(text) || isImageDataUri(text) || RAW_BASE64.test(text);
}

const frame = (required?: string) =>
  z
    .string({ error: (issue) => (required !== undefined && (issue.input === undefined || issue.input === null) ? required : FRAME_RULE) })
    .refine(isFrameImage, { message: FRAME_RULE, abort: true })
    .meta({ pattern: urlOrDataUriPattern(RAW_BASE64_SOURCE) });

/** A frame image on text2video: refused, a well-formed one as belonging to image2video. */
const notHere = () =>
  z
    .null({ error: (issue) => (typeof issue.input === 'string' && isFrameImage(issue.input) ? 'frame images go to /clip/v1/videos/image2video' : FRAME_RULE) })
    .optional()
    .meta({ description: 'not taken here: frame images go to /clip/v1/videos/image2video' });

/** `model_name`, or `model` when it is absent: refused as the rules refuse it. */
const ClipModel = requiredOneOf(clipModels, `required, one of ${clipModels.join(', ')}`);

const head = {
  model_name: oneOf(clipModels).meta({ description: 'required (or model)' }),
  model: z.unknown().optional().meta({ type: 'string', description: 'the same as model_name, read only when model_name is absent' }),
  mode: oneOf(CLIP_MODES).meta({ description: 'default std; clip-v2-master only pro (its default)' }),
};

const standard = clipModels.filter((m) => !CLIP_PRO_ONLY_MODELS.includes(m));
const proOnly = clipModels.filter((m) => CLIP_PRO_ONLY_MODELS.includes(m));
const notStd = { type: 'string', nullable: true, enum: ['pro', null] };

/**
 * The model, as `model_name` or else `model`, and the mode it offers (request.ts refuses std on a
 * pro-only model), for the document: withAlias and the plan check them in their own words.
 */
const MODEL_CHOSEN = [
  { required: ['model_name'], properties: { model_name: { type: 'string', enum: standard } } },
  { required: ['model_name'], properties: { model_name: { type: 'string', enum: proOnly }, mode: notStd } },
  { required: ['model'], properties: { model_name: ABSENT_OR_NULL, model: { type: 'string', enum: standard } } },
  { required: ['model'], properties: { model_name: ABSENT_OR_NULL, model: { type: 'string', enum: proOnly }, mode: notStd } },
];

const tail = {
  duration: wholeSeconds(1, CLIP_MAX_DURATION).meta({ description: `default ${CLIP_DEFAULTS.duration}` }),
  aspect_ratio: z
    .string({ error: ASPECT_RATIO_RULE })
    .regex(ASPECT_RATIO, ASPECT_RATIO_RULE)
    .nullish()
    .meta({ description: `default ${CLIP_DEFAULTS.aspect_ratio}` }),
  cfg_scale: number(0, 1).meta({ description: `guidance, default ${CLIP_DEFAULTS.cfg_scale}` }),
  metadata: object().meta({ description: 'forwarded upstream as given' }),
};

/** A submit body: the model and mode, the path's own fields, then what both paths read last. */
const clipBody = <S extends z.core.$ZodLooseShape>(own: S) =>
  withAlias('model_name', 'model', ClipModel, jsonBody({ ...head, ...own, ...tail }).meta({ anyOf: MODEL_CHOSEN }));

export const ClipTextBody = clipBody({
  prompt: requiredText('required for text2video, a non-empty string').meta({ description: 'the prompt, at most 32000 characters' }),
  negative_prompt: optionalString(),
  image: notHere(),
  image_tail: notHere(),
});

export const ClipImageBody = clipBody({
  prompt: optionalString(),
  negative_prompt: optionalString(),
  image: frame('required for image2video: the first-frame image').meta({ description: `the first frame: ${FRAME_DESCRIPTION}` }),
  image_tail: frame()
    .nullish()
    .meta({ description: `the last frame: ${FRAME_DESCRIPTION}` }),
});

export const CLIP_BODIES = { text2video: ClipTextBody, image2video: ClipImageBody } as const;
export type ClipBody = z.output<typeof ClipTextBody> | z.output<typeof ClipImageBody>;

const Stamps = {
  task_id: z.string(),
  created_at: z.number().meta({ description: 'Unix milliseconds' }),
  updated_at: z.number().meta({ description: 'Unix milliseconds' }),
};

export const ClipSubmitAnswer = z.object({
  code: z.literal(0),
  message: z.string(),
  request_id: z.string().meta({ description: "this request's id" }),
  data: z.object({ ...Stamps, task_status: z.literal('submitted') }),
});

export const ClipTaskAnswer = z.object({
  code: z.number().meta({ description: '0' }),
  message: z.string(),
  request_id: z.string().meta({ description: "this request's id" }),
  data: z.object({
    ...Stamps,
    task_status: z.enum(['submitted', 'processing', 'succeed', 'failed']),
    task_status_msg: z.string().meta({ description: 'why the task failed' }),
    task_result: z.object({
      videos: z.array(z.object({ id: z.string(), url: z.string().meta({ description: "the gateway's signed URL" }), duration: z.number() })),
    }),
    final_unit_deduction: z.number().meta({ description: 'the seconds charged' }),
  }),
});

export type ClipTaskBody = z.infer<typeof ClipTaskAnswer>;
export type ClipSubmitBody = z.infer<typeof ClipSubmitAnswer>;
