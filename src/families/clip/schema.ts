/**
 * The clip routes' declared contract (spec 4.12, 2.5): the body both submit paths take, as the
 * rules read it (request.ts: same fields, same words, in their order), and the answers. What
 * depends on the path (a prompt for text2video, the first frame for image2video), on the model
 * (clip-v2-master only in pro) or on another field (`model`, the alias `model_name` wins over)
 * stays with the rules, as do the bounds of the forwarded `metadata`.
 */
import { z } from 'zod';
import { jsonBody, number, object, oneOf, optionalString, wholeSeconds } from '../kit/schema.js';
import { clipModels } from './catalog.js';
import { ASPECT_RATIO, ASPECT_RATIO_RULE, CLIP_DEFAULTS, CLIP_MAX_DURATION, CLIP_MODES, FRAME_RULE, isFrameImage } from './request.js';

const frame = (description: string) =>
  z
    .string({ error: FRAME_RULE })
    .refine(isFrameImage, FRAME_RULE)
    .nullish()
    .meta({ description: `${description}: an http/https URL, a data:image/<format>;base64,<data> URI or raw Base64` });

export const ClipBody = jsonBody({
  model_name: oneOf(clipModels).meta({ description: 'required (or model)' }),
  model: z.unknown().optional().meta({ type: 'string', description: 'the same as model_name, read only when model_name is absent' }),
  mode: oneOf(CLIP_MODES).meta({ description: 'default std; clip-v2-master only pro (its default)' }),
  prompt: optionalString().meta({ description: 'required for text2video' }),
  negative_prompt: optionalString(),
  image: frame('image2video: the first frame (required there)'),
  image_tail: frame('image2video: the last frame'),
  duration: wholeSeconds(1, CLIP_MAX_DURATION).meta({ description: `default ${CLIP_DEFAULTS.duration}` }),
  aspect_ratio: z
    .string({ error: ASPECT_RATIO_RULE })
    .regex(ASPECT_RATIO, ASPECT_RATIO_RULE)
    .nullish()
    .meta({ description: `default ${CLIP_DEFAULTS.aspect_ratio}` }),
  cfg_scale: number(0, 1).meta({ description: `guidance, default ${CLIP_DEFAULTS.cfg_scale}` }),
  metadata: object().meta({ description: 'forwarded upstream as given' }),
});

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
