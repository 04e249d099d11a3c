/**
 * The async image routes' declared contract (spec 4.9, 4.10): the submit body and the answers.
 * The model selects the body: one member per model family (pro-image, anime, picgen) or, for
 * vis, per model (its sizes and whether it edits differ), each declaring the fields that model
 * takes in the words of its rules. What depends on which fields are given (a vis edit, one of
 * pro-image's image and images, vis's distinct references) is decided by the rules after
 * (async-request.ts, rules/*.ts).
 */
import { z } from 'zod';
import { isOneOf, isPlainObject } from '../kit/fields.js';
import { proImageOptions, proImageReferences } from '../kit/pro-image-rules.js';
import { ABSENT_OR_NULL, boundedString, forwardedObject, given, int, integerRangeSource, jsonBody, prompt, ref, refList, refused } from '../kit/schema.js';
import { animeModels, picgenAsyncModels, visEditModels, visGenerationModels } from './catalog.js';
import { ANIME_MAX_N, ANIME_MAX_SIDE, ANIME_MIN_SIDE, ANIME_SIZE_RULE, isAnimeSize } from './rules/anime.js';
import { METADATA_RESERVED, NOT_ACCEPTED, NOT_SUPPORTED, PICGEN_ASYNC_MAX_REFERENCES, PICGEN_ASYNC_SIZE_MAX } from './rules/picgen.js';
import { VIS_EDIT_MAX_REFERENCES, VIS_EDIT_N, VIS_MAX_N, VIS_QUALITIES, visRatiosOf, visSizeFault, visSizeRule } from './rules/vis.js';

/** A pixel size as parsePixelSize reads it (kit/fields.ts). */
const PIXELS = '[1-9][0-9]{0,4}x[1-9][0-9]{0,4}';
const animeSide = integerRangeSource(ANIME_MIN_SIDE, ANIME_MAX_SIDE);

export const PRO_IMAGE_MODEL = 'pro-image';
const MODEL_ECHO_MAX = 64;

export const MODEL_REQUIRED = 'required, the name of an async image model';

/** Why `model` is refused when it names no async image model (the name echoed, cut at 64 characters). */
function notAsyncImageModel(model: string): string {
  const shown = model.length > MODEL_ECHO_MAX ? `${model.slice(0, MODEL_ECHO_MAX)}…` : model;
  return `${JSON.stringify(shown)} is not an async image model; this endpoint accepts pro-image and the anime, vis and picgen async models`;
}

// ---- pro-image ------------------------------------------------------------------------------------

/** One of `image` and `images` (proImageDraft refuses both). */
const ProImageBody = jsonBody({ model: z.literal(PRO_IMAGE_MODEL), prompt, ...proImageReferences, ...proImageOptions }).meta({
  anyOf: [{ properties: { image: ABSENT_OR_NULL } }, { properties: { images: ABSENT_OR_NULL } }],
});

// ---- anime ----------------------------------------------------------------------------------------

const AnimeBody = jsonBody({
  model: z.enum(animeModels),
  prompt,
  images: refused('not accepted by anime models; give exactly one reference as image'),
  image: ref('url-or-data', 'exactly one reference, given as one string (not an array)').meta({
    description: 'one reference image, which makes the task image-to-image: an http/https URL or a data:image/<format>;base64,<data> URI',
  }),
  n: int(1, ANIME_MAX_N).meta({ description: 'images to make, default 1' }),
  size: z
    .string({ error: ANIME_SIZE_RULE })
    .refine(isAnimeSize, ANIME_SIZE_RULE)
    .nullish()
    .meta({ pattern: `^${animeSide}x${animeSide}$`, description: 'default 1024x1024' }),
});

// ---- vis ------------------------------------------------------------------------------------------

const visSize = (model: string) =>
  z
    .string({ error: visSizeRule(model) })
    .superRefine((size, ctx) => {
      const fault = visSizeFault(model, size);
      if (fault !== undefined) ctx.addIssue({ code: 'custom', message: fault });
    })
    .nullish()
    .meta({
      // What visSizeFault takes: a ratio of the model, `auto` where it is offered, a pixel size.
      pattern: `^(?:${[...visRatiosOf(model), ...(visSizeFault(model, 'auto') === undefined ? ['auto'] : []), PIXELS].join('|')})$`,
      description: `one of ${visRatiosOf(model).join(', ')}, or a pixel size mapped to the nearest of them; default 1:1`,
    });

const visQuality = z.enum(VIS_QUALITIES, { error: 'must be low or medium' }).nullish().meta({ description: 'forwarded by vis-imagine-image-2.0 only' });

const visReferences = {
  image: ref('url').meta({ description: 'a reference image, which makes the task an edit' }),
  images: refList('url').meta({ description: 'reference images (an edit); with image, at most 5 distinct' }),
};

/** A model that only generates (vis-imagine-1.0, -2.0): reference images belong to its -edit model. */
const visGenerationBody = <M extends string>(model: M) =>
  jsonBody({ model: z.literal(model), prompt, n: int(1, VIS_MAX_N).meta({ description: 'default 1' }), size: visSize(model), quality: visQuality });

/** A reference image given, as JSON Schema (the rules refuse an edit without one). */
const GIVEN_REFERENCE = [
  { required: ['image'], properties: { image: { type: 'string' } } },
  { required: ['images'], properties: { images: { type: 'array' } } },
];

/**
 * At most 5 distinct references, image and images together (rules/vis.ts): the document says at
 * most 5 in all, as a schema cannot count distinct values.
 */
const AT_MOST_5_REFERENCES = [
  { properties: { image: ABSENT_OR_NULL, images: { type: 'array', nullable: true, maxItems: VIS_EDIT_MAX_REFERENCES } } },
  { properties: { images: { type: 'array', nullable: true, maxItems: VIS_EDIT_MAX_REFERENCES - 1 } } },
];

/** A model that only edits (-edit): a reference image is required, one image comes back. */
const visEditBody = <M extends string>(model: M) =>
  jsonBody({
    model: z.literal(model),
    prompt,
    ...visReferences,
    n: z.literal(1, { error: VIS_EDIT_N }).nullish(),
    size: visSize(model),
    quality: visQuality,
  }).meta({ allOf: [{ anyOf: GIVEN_REFERENCE }, { anyOf: AT_MOST_5_REFERENCES }] });

/** A model that does both: an edit when a reference image is given (then n must be 1). */
const visBody = <M extends string>(model: M) =>
  jsonBody({
    model: z.literal(model),
    prompt,
    ...visReferences,
    n: int(1, VIS_MAX_N).meta({ description: 'default 1; an edit (a reference image given) takes only 1' }),
    size: visSize(model),
    quality: visQuality,
  }).meta({
    // An edit (visEditN): n 1 once a reference image is given.
    allOf: [
      {
        anyOf: [{ properties: { image: ABSENT_OR_NULL, images: ABSENT_OR_NULL } }, { properties: { n: { type: 'integer', nullable: true, enum: [1, null] } } }],
      },
      { anyOf: AT_MOST_5_REFERENCES },
    ],
  });

const generationOnly = visGenerationModels.filter((m) => !(visEditModels as readonly string[]).includes(m));
const editOnly = visEditModels.filter((m) => !(visGenerationModels as readonly string[]).includes(m));
const both = visGenerationModels.filter((m) => (visEditModels as readonly string[]).includes(m));
const VisGenerationBodies = generationOnly.map(visGenerationBody);
const VisEditBodies = [...editOnly.map(visEditBody), ...both.map(visBody)];

// ---- picgen ---------------------------------------------------------------------------------------

const PicgenBody = jsonBody({
  model: z.enum(picgenAsyncModels),
  prompt,
  quality: refused(NOT_ACCEPTED),
  n: refused(NOT_ACCEPTED),
  sequential_image_generation: refused(NOT_SUPPORTED),
  sequential_image_generation_options: refused(NOT_SUPPORTED),
  layer_decomposition: refused(NOT_SUPPORTED),
  image: ref('url').meta({ description: 'a reference image URL (images wins)' }),
  images: refList('url', PICGEN_ASYNC_MAX_REFERENCES),
  size: boundedString({ minLength: 1, maxLength: PICGEN_ASYNC_SIZE_MAX }).meta({ description: 'passed through, e.g. 2K or 2048x2048' }),
  // A reserved key is refused even as null.
  metadata: forwardedObject(Object.fromEntries(Object.entries(METADATA_RESERVED).map(([key, reason]) => [key, z.never({ error: reason }).optional()]))).meta({
    description: 'further upstream options, merged into the upstream request (not model, prompt, image, images, size, n or the unsupported ones)',
  }),
});

// ---- the body -------------------------------------------------------------------------------------

/** Why a body is refused before any member is chosen: it is no object, or names no model this route serves. */
function unchosen(issue: z.core.$ZodRawIssue): string {
  if (issue.code === 'invalid_type') return 'must be a JSON object';
  const model = isPlainObject(issue.input) ? issue.input.model : undefined;
  if (model === undefined || model === null) return MODEL_REQUIRED;
  return typeof model === 'string' ? notAsyncImageModel(model) : 'must be a string';
}

/**
 * A vis model that both generates and edits takes `n` 1 to 4, but only 1 once a reference image
 * makes the task an edit: no member can say that, so it is checked before the member is, with
 * the rules' words whatever the `n` given (an edit-only model's member says it itself).
 */
function visEditN(body: unknown, ctx: z.core.$RefinementCtx): unknown {
  if (!isPlainObject(body) || !isOneOf(both, body.model) || !(given(body.image) || given(body.images))) return body;
  if (given(body.n) && body.n !== 1) ctx.addIssue({ code: 'custom', path: ['n'], message: VIS_EDIT_N });
  return body;
}

export const AsyncImageBody = z.preprocess(
  visEditN,
  z
    .discriminatedUnion('model', [ProImageBody, AnimeBody, ...VisGenerationBodies, ...VisEditBodies, PicgenBody], { error: unchosen })
    .meta({ description: 'the model selects the body: pro-image, anime, a vis model, or a picgen async model' }),
);

export type AsyncImageRequest = z.output<typeof AsyncImageBody>;
export type AnimeRequest = z.output<typeof AnimeBody>;
export type VisEditRequest = z.output<(typeof VisEditBodies)[number]>;
export type VisRequest = z.output<(typeof VisGenerationBodies)[number]> | VisEditRequest;
export type PicgenRequest = z.output<typeof PicgenBody>;

// ---- answers --------------------------------------------------------------------------------------

const TaskStatus = z.enum(['queued', 'in_progress', 'completed', 'failed']);

const revisedPrompt = z.string().optional();

const ImageItem = z.object({
  b64_json: z.string().optional().meta({ description: 'the image, Base64 (pro-image)' }),
  url: z.string().optional().meta({ description: 'a signed link to the image, valid until metadata.assetsExpireAt' }),
  revised_prompt: revisedPrompt,
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

/**
 * The answer as the view stores it (view.ts): an item holds an asset reference as `url` (signed
 * by the instance answering) or, for Base64 results, the asset key the query inlines as `b64_json`.
 */
export const StoredImageTask = ImageTaskAnswer.extend({
  data: z.array(z.object({ url: z.string().optional(), b64_asset: z.string().optional(), revised_prompt: revisedPrompt })),
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
