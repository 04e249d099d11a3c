/**
 * The declared contract of synchronous picgen (spec 4.7, 4.8): the bodies of its models on
 * `POST /v1/images/generations` and of `POST /v1/images/edits` (a multipart form is decoded into
 * the same body before validation), as the rules read them (request.ts, fields.ts: the same
 * fields in the same order, refused in the same words), and the answer.
 *
 * What the model's capabilities decide first (a field a model does not take is refused as not
 * supported before its shape is looked at: `tools`, `sequential_image_generation_options`) is
 * declared for the document only; the size presets, the reference count and every cross-field
 * rule stay with the rules, which run after.
 */
import { z } from 'zod';
import { MAX_PROMPT_CHARS } from '../kit/fields.js';
import { bool, jsonBody, oneOf, optionalString, prompt, requiredOneOf } from '../kit/schema.js';
import { PICGEN_CAPABILITIES, SEQUENTIAL_MAX_TOTAL } from './capabilities.js';
import { picgenSyncModels } from './catalog.js';
import {
  BACKGROUNDS,
  MASK_REFUSAL,
  MAX_TOOLS,
  N_RULE,
  OUTPUT_FORMATS,
  PROMPT_MODE_RULE,
  PROMPT_MODES,
  PROMPT_OPTIONS_RULE,
  RESPONSE_FORMATS,
  SEQUENTIAL,
  STREAM_RULE,
} from './fields.js';
import { MAX_FILES } from './multipart.js';
import { IMAGE_REQUIRED, LAYERS_ON_GENERATIONS, referenceProblem, REFERENCES_ON_GENERATIONS } from './request.js';

const model = requiredOneOf(picgenSyncModels, `required, one of ${picgenSyncModels.join(', ')}`).meta({
  description: 'the picgen model: its row of the capability table decides the sizes, series, layers, output_format, tools and reference count it takes',
});

/** A field that must not be there at all (even as null), refused in the rules' words. */
const notTaken = (reason: string) =>
  z
    .never({ error: reason })
    .optional()
    .meta({ description: `refused: ${reason}` });

/** A field whose first check depends on the model: every value passes here, the model's rules judge it. */
const byModel = (description: string, json: Record<string, unknown>) =>
  z
    .unknown()
    .optional()
    .meta({ ...json, description });

const size = z.string({ error: 'must be a string' }).nullish().meta({
  description:
    "a preset of the model's row (1K, 1.5K, 2K, 3K or 4K, case-insensitive) or <width>x<height> within its pixel range and an aspect ratio from 1:16 to 16:1; a layer decomposition takes 1K, 1.5K, 2K or auto. Omitted: priced as 2K (generations) or auto (edits), not sent",
});

/** What both endpoints read last (fields.ts, readCommonFields), in its order; `mask`, read between these two parts, stands where each endpoint first reads it. */
const leading = {
  n: z.literal(1, { error: N_RULE }).nullish().meta({ description: 'only 1: a series is sequential_image_generation' }),
  stream: z.literal(false, { error: STREAM_RULE }).nullish().meta({ description: 'only false: picgen does not stream' }),
};

const trailing = {
  sequential_image_generation: oneOf(SEQUENTIAL).meta({
    description: 'auto: a series of images (5.0, 5.0 Lite, 4.5 and 4.0); disabled is accepted by every model',
  }),
  sequential_image_generation_options: byModel(
    `series models only: the most images of the series; references plus images at most ${SEQUENTIAL_MAX_TOTAL} (reserved on that most, charged on the images returned)`,
    { type: 'object', properties: { max_images: { type: 'integer', minimum: 1, maximum: SEQUENTIAL_MAX_TOTAL } } },
  ),
  seed: z.number({ error: 'must be an integer' }).refine(Number.isSafeInteger, 'must be an integer').nullish().meta({ type: 'integer' }),
  guidance_scale: z.number({ error: 'must be a finite number' }).nullish(),
  watermark: bool(),
  optimize_prompt: bool(),
  optimize_prompt_options: z
    .looseObject(
      {
        mode: z.enum(PROMPT_MODES, { error: PROMPT_MODE_RULE }).nullish().meta({ description: 'fast: 5.0 Pro and 4.0 only' }),
      },
      { error: PROMPT_OPTIONS_RULE },
    )
    .nullish(),
  output_format: oneOf(OUTPUT_FORMATS).meta({ description: '5.0-series models only' }),
  background: oneOf(BACKGROUNDS).meta({
    description: 'transparent on 5.0 Pro and 5.0 Flash needs exactly one reference image and not output_format jpeg; forwarded to the others',
  }),
  tools: byModel(`5.0 and 5.0 Lite only: 1 to ${MAX_TOOLS} tool objects, forwarded as given`, {
    type: 'array',
    minItems: 1,
    maxItems: MAX_TOOLS,
    items: { type: 'object', required: ['type'], properties: { type: { type: 'string' } }, additionalProperties: true },
  }),
  response_format: oneOf(RESPONSE_FORMATS).meta({ description: 'b64_json adds each image as Base64 beside its url; default url' }),
};

/** `POST /v1/images/generations` for a picgen model (request.ts, generation). */
export const GenerationBody = jsonBody({
  model,
  prompt,
  image: notTaken(REFERENCES_ON_GENERATIONS),
  images: notTaken(REFERENCES_ON_GENERATIONS),
  layer_decomposition: bool()
    .refine((layers) => layers !== true, LAYERS_ON_GENERATIONS)
    .meta({ description: 'only false here: layer decomposition is an edit' }),
  size,
  ...leading,
  mask: notTaken(MASK_REFUSAL),
  ...trailing,
});

const referenceLimits = Object.values(PICGEN_CAPABILITIES)
  .map((caps) => `${caps.maxReferences} (${caps.label})`)
  .join(', ');

/**
 * One reference image or a non-empty list of them. Their number depends on the model (the rules
 * count them first); each is checked here as the rules check it, naming `image` or `image.<i>`.
 */
const image = z
  .custom<unknown>(() => true)
  .superRefine((value, ctx) => {
    if (value === undefined || value === null) {
      ctx.addIssue({ code: 'custom', message: IMAGE_REQUIRED });
      return;
    }
    const list: unknown[] = Array.isArray(value) ? value : [value];
    for (const [index, item] of list.entries()) {
      const problem = referenceProblem(item);
      if (problem === undefined) continue;
      ctx.addIssue({ code: 'custom', message: problem, path: Array.isArray(value) ? [index] : [] });
      return;
    }
  })
  .meta({
    description: `the reference images: http/https URLs or data:image/<lowercase format>;base64,<data> URIs (files in a form), at most 30 MiB each; by model at most ${referenceLimits}; exactly one for a layer decomposition`,
    anyOf: [{ type: 'string' }, { type: 'array', minItems: 1, maxItems: MAX_FILES, items: { type: 'string' } }],
  });

/** `POST /v1/images/edits` (request.ts, edit), JSON or the decoded form. */
export const EditBody = jsonBody({
  model,
  layer_decomposition: bool().meta({ description: 'true: split the one reference image into layers (5.0 Pro, 5.0 Flash); the prompt is then optional' }),
  mask: notTaken(MASK_REFUSAL),
  image,
  prompt: optionalString(MAX_PROMPT_CHARS).meta({
    description: `required (a non-empty string) unless layer_decomposition; at most ${MAX_PROMPT_CHARS} characters`,
  }),
  size,
  ...leading,
  ...trailing,
});

export const PicgenAnswer = z.strictObject({
  created: z.int().nonnegative().meta({ description: 'when the call completed, Unix seconds' }),
  data: z.array(
    z.strictObject({
      url: z.string().meta({ description: 'a signed link to the re-hosted image, or the upstream URL when the gateway could not fetch it' }),
      b64_json: z.string().optional().meta({ description: 'the image as Base64, with response_format b64_json' }),
    }),
  ),
});
