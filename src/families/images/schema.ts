/**
 * The async image routes' declared contract (spec 4.9, 4.10): the submit body and the answers.
 * Every model reads `model` and then `prompt` the same way (async-request.ts), so those two are
 * checked here in the rules' own words. Every other field means something else, within other
 * limits and in other words, for each model family (rules/*.ts, kit/pro-image-rules.ts): they
 * are declared for the document only (`byModel`) and left to the model's rules, which run after.
 */
import { z } from 'zod';
import { PRO_IMAGE_MAX_N, PRO_IMAGE_MAX_REFERENCES, PRO_IMAGE_USER_MAX } from '../kit/pro-image-rules.js';
import { jsonBody, prompt } from '../kit/schema.js';
import { ASYNC_IMAGE_MODELS, asyncImageFamilyOf, MODEL_REQUIRED, notAsyncImageModel } from './async-request.js';
import { ANIME_MAX_N, ANIME_MAX_SIDE, ANIME_MIN_SIDE } from './rules/anime.js';
import { PICGEN_ASYNC_MAX_REFERENCES, PICGEN_ASYNC_SIZE_MAX } from './rules/picgen.js';
import { VIS_EDIT_MAX_REFERENCES, VIS_MAX_N } from './rules/vis.js';

type JsonType = 'string' | 'integer' | 'object' | 'array';

/**
 * A field whose type, limits and refusals depend on the model: every value passes the schema, the
 * model's rules check it (a model that does not take it ignores or refuses it, in its words).
 */
const byModel = (type: JsonType, description: string, extra: Record<string, unknown> = {}) =>
  z
    .unknown()
    .optional()
    .meta({ type, description, ...extra });

const model = z
  .string({ error: (issue) => (issue.input === undefined || issue.input === null ? MODEL_REQUIRED : 'must be a string') })
  .superRefine((name, ctx) => {
    if (!asyncImageFamilyOf(name)) ctx.addIssue({ code: 'custom', message: notAsyncImageModel(name) });
  })
  .meta({ enum: [...ASYNC_IMAGE_MODELS], description: 'the model; it selects the family (pro-image, anime, vis, picgen) whose rules read the other fields' });

export const AsyncImageBody = jsonBody({
  model,
  prompt,
  image: byModel(
    'string',
    'one reference image, which makes the task an edit: an http/https URL, or a data:image/<format>;base64,<data> URI for pro-image and anime; vis and picgen take URLs only',
  ),
  images: byModel(
    'array',
    `reference images: pro-image 1 to ${PRO_IMAGE_MAX_REFERENCES} URLs or data URIs (not with image); vis edits URLs, at most ${VIS_EDIT_MAX_REFERENCES} distinct with image; picgen 1 to ${PICGEN_ASYNC_MAX_REFERENCES} URLs (wins over image); not taken by anime`,
    { items: { type: 'string' } },
  ),
  n: byModel(
    'integer',
    `images to make, default 1: pro-image 1 to ${PRO_IMAGE_MAX_N}, anime 1 to ${ANIME_MAX_N}, vis 1 to ${VIS_MAX_N} (edits only 1); not taken by picgen`,
  ),
  size: byModel(
    'string',
    `pro-image: auto or <width>x<height>; anime: <width>x<height>, each side ${ANIME_MIN_SIDE} to ${ANIME_MAX_SIDE} (default 1024x1024); vis: an aspect ratio such as 16:9, auto (not the 1.0 and 2.0 lines) or a pixel size mapped to the nearest ratio (default 1:1); picgen: passed through, 1 to ${PICGEN_ASYNC_SIZE_MAX} characters`,
  ),
  quality: byModel('string', 'pro-image: low, medium, high or auto; vis: low or medium (used by vis-imagine-image-2.0 only); not taken by picgen'),
  background: byModel('string', 'pro-image only: transparent, opaque, auto or none'),
  output_format: byModel('string', 'pro-image only: png, jpeg or webp'),
  moderation: byModel('string', 'pro-image only: auto, low or high'),
  user: byModel('string', `pro-image only: at most ${PRO_IMAGE_USER_MAX} characters`),
  metadata: byModel('object', 'picgen only: further upstream options, merged into the upstream request (not model, prompt, image, images, size or n)', {
    additionalProperties: true,
  }),
});

const TaskStatus = z.enum(['queued', 'in_progress', 'completed', 'failed']);

const ImageItem = z.object({
  b64_json: z.string().optional().meta({ description: 'the image, Base64 (pro-image)' }),
  url: z.string().optional().meta({ description: 'a signed link to the image, valid until metadata.assetsExpireAt' }),
  revised_prompt: z.string().optional(),
});

/** The `image.task` object (src/families/images/view.ts): the query's answer and the submit's. */
export const ImageTaskAnswer = z.object({
  id: z.string(),
  task_id: z.string().meta({ description: 'the same as id' }),
  object: z.literal('image.task'),
  model: z.string(),
  status: TaskStatus,
  progress: z.string().meta({ description: 'a percentage, e.g. 40%' }),
  created_at: z.number().meta({ description: 'Unix seconds' }),
  completed_at: z.number().optional().meta({ description: 'Unix seconds, once completed or failed' }),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  data: z.array(ImageItem).meta({ description: 'the images once completed; empty before, and after the assets expired' }),
  metadata: z.object({ assetsExpireAt: z.number().meta({ description: 'Unix seconds' }) }).optional(),
});

/** The picgen submit's five fields (spec 2.1); strict, so a full task object never reads as it. */
const PicgenSubmitAnswer = z.strictObject({
  id: z.string(),
  task_id: z.string(),
  status: TaskStatus.meta({ description: 'queued' }),
  model: z.string(),
  created_at: z.number(),
});

// The full object first: a union answers with the first member that matches.
export const AsyncImageSubmitAnswer = z
  .union([ImageTaskAnswer, PicgenSubmitAnswer])
  .meta({ description: 'the queued task; picgen models answer only id, task_id, status, model and created_at' });
