/**
 * The declared contract of synchronous picgen (spec 4.7, 4.8): the bodies of its models on
 * `POST /v1/images/generations` and of `POST /v1/images/edits` (a multipart form is decoded into
 * the same body before validation), each field declared once, refused in the words clients have
 * always read, and the answer.
 *
 * Both bodies are unions on `model`: each model's row of the capability table (capabilities.ts)
 * decides the sizes, the series, the layers, output_format, tools, the fast prompt mode and the
 * reference count it takes, and a value it does not take is refused naming the model. On edits a
 * layer decomposition (5.0 Pro, 5.0 Flash) is a union on `layer_decomposition`: exactly one
 * reference, the prompt optional, the layer sizes. What ties fields together otherwise (a series'
 * references plus images, a transparent background with the references and output_format) and
 * the size of the forwarded tools stay with the plan (request.ts, fields.ts).
 */
import { z } from 'zod';
import { isHttpUrl, isImageDataUri, isOneOf, isPlainObject, MAX_PROMPT_CHARS } from '../kit/fields.js';
import { absent, bool, byKind, int, jsonBody, NON_BLANK, notTaken, oneOf, optionalString, prompt, urlOrDataUriPattern } from '../kit/schema.js';
import { LAYER_SIZES, PICGEN_CAPABILITIES, type PicgenSyncModel, SEQUENTIAL_MAX_TOTAL } from './capabilities.js';
import { picgenSyncModels } from './catalog.js';
import { layerSizeProblem, sizePattern, sizeProblem } from './size.js';

export const MAX_TOOLS = 16;
export const OUTPUT_FORMATS = ['png', 'jpeg'] as const;
export const BACKGROUNDS = ['opaque', 'transparent'] as const;
export const SEQUENTIAL = ['auto', 'disabled'] as const;
export const PROMPT_MODES = ['standard', 'fast'] as const;
export const RESPONSE_FORMATS = ['url', 'b64_json'] as const;
/** Largest reference image, as a file or a data URI (spec 4.8: 30 MiB per file). */
export const MAX_REFERENCE_BYTES = 30 * 1024 * 1024;

export const N_RULE = 'must be 1 (one image per synchronous picgen call; use sequential_image_generation for series)';
export const STREAM_RULE = 'must be false or omitted; streaming is not supported for picgen';
export const MASK_REFUSAL = 'not supported; masked edits are not available for picgen';
const PROMPT_OPTIONS_RULE = 'must be an object such as {"mode": "standard"} or null';
const PROMPT_MODE_RULE = 'must be standard or fast';
const IMAGE_REQUIRED = 'required: one reference image or an array of them (http/https URLs or data:image/<format>;base64,… URIs)';
const REFERENCE_RULE = 'must be an http/https URL or a data:image/<lowercase format>;base64,<data> URI';
/** Why `image` or `images` (even null) is refused on generations. */
const REFERENCES_ON_GENERATIONS = 'reference images are not taken by /v1/images/generations; send them to /v1/images/edits';
const LAYERS_ON_GENERATIONS = 'true needs exactly one reference image and cannot be used on /v1/images/generations; use /v1/images/edits';
const TOOLS_RULE = `must be an array of 1 to ${MAX_TOOLS} objects, each with a non-empty string type`;

const enumRule = (values: readonly string[]) => `must be one of ${values.join(', ')}`;

/**
 * A field this model does not take: any value but null is refused, `valid` ones with `reason`,
 * others in the field's own words (the document says null only: a nullable enum of null).
 */
const notForModel = (reason: string, valid?: { values: readonly string[]; rule: string }) =>
  z
    .null({ error: (issue) => (valid === undefined || isOneOf(valid.values, issue.input) ? reason : valid.rule) })
    .optional()
    .meta({ description: `refused: ${reason}` });

/** One of `values` where the model takes only `taken` of them: the others refused with `reason`. */
const onlySome = <const T extends readonly [string, ...string[]]>(taken: T, values: readonly string[], reason: (value: string) => string) =>
  z.enum(taken, { error: (issue) => (isOneOf(values, issue.input) ? reason(issue.input) : enumRule(values)) }).nullish();

// ---- references ---------------------------------------------------------------------------------

function dataUriBytes(uri: string): number {
  const payload = uri.slice(uri.indexOf(',') + 1);
  return Math.floor((payload.length * 3) / 4);
}

/** One reference image: a URL or a Base64 image data URI of at most MAX_REFERENCE_BYTES. */
const Reference = z
  .string({ error: REFERENCE_RULE })
  .refine((item) => isHttpUrl(item) || isImageDataUri(item), { message: REFERENCE_RULE, abort: true })
  .refine((item) => !item.startsWith('data:') || dataUriBytes(item) <= MAX_REFERENCE_BYTES, `is larger than ${MAX_REFERENCE_BYTES} bytes`)
  .meta({ pattern: urlOrDataUriPattern() });

/**
 * `image`: one reference or a list of 1 to `max` (each is looked at before they are counted);
 * `layers`: exactly one, as a layer decomposition takes.
 */
function references(max: number, layers: boolean) {
  const count = (issue: { input: unknown }) => `must hold 1 to ${max} reference images for this model, got ${(issue.input as unknown[]).length}`;
  const counted = z.array(z.string()).min(1, { error: count }).max(max, { error: count });
  const exactlyOne = (issue: { input: unknown }) => `layer decomposition needs exactly one input image, got ${(issue.input as unknown[]).length}`;
  const list = z
    .array(Reference)
    .pipe(layers ? counted.length(1, { error: exactlyOne }) : counted)
    .meta({ minItems: 1, maxItems: layers ? 1 : max });
  return byKind({ string: Reference, array: list }, (input) => (absent(input) ? IMAGE_REQUIRED : REFERENCE_RULE)).meta({
    description: `the reference images: http/https URLs or data:image/<lowercase format>;base64,<data> URIs (files in a form), at most 30 MiB each; ${layers ? 'exactly one for a layer decomposition' : `at most ${max} for this model`}`,
  });
}

// ---- fields of a model --------------------------------------------------------------------------

/** `size`: a preset of the model's row or custom dimensions within its range; a layer decomposition takes the layer sizes. */
const size = (model: PicgenSyncModel, layers: boolean) => {
  const caps = PICGEN_CAPABILITIES[model];
  const problem = (text: string) => (layers ? layerSizeProblem(text) : sizeProblem(text, caps, model));
  return z
    .string({ error: 'must be a string' })
    .superRefine((text, ctx) => {
      const message = problem(text);
      if (message !== undefined) ctx.addIssue({ code: 'custom', message });
    })
    .nullish()
    .meta({
      pattern: layers ? sizePattern(LAYER_SIZES, false) : sizePattern(caps.presets, true),
      description: layers
        ? 'a layer decomposition takes 1K, 1.5K, 2K or auto'
        : `${caps.presets.join(', ')} (case-insensitive) or <width>x<height> with a pixel area from ${caps.minArea} to ${caps.maxArea} and an aspect ratio from 1:16 to 16:1. Omitted: priced as 2K (generations) or auto (edits), not sent`,
    });
};

/** What every body reads after the references, prompt and size; `mask` stands where each endpoint first reads it. */
const leading = {
  n: z.literal(1, { error: N_RULE }).nullish().meta({ description: 'only 1: a series is sequential_image_generation' }),
  stream: z.literal(false, { error: STREAM_RULE }).nullish().meta({ description: 'only false: picgen does not stream' }),
};

/** What every body reads last (fields.ts), in its order, as the model takes it. */
function trailing(model: PicgenSyncModel, endpoint: 'generate' | 'edit') {
  const caps = PICGEN_CAPABILITIES[model];
  const by = `${model} (${caps.label})`;
  const tool = z.looseObject(
    { type: z.string({ error: 'must be a non-empty string' }).regex(NON_BLANK, 'must be a non-empty string') },
    { error: 'must be an object with a non-empty string type' },
  );
  return {
    sequential_image_generation: caps.sequential
      ? oneOf(SEQUENTIAL).meta({ description: 'auto: a series of images' })
      : onlySome(['disabled'], SEQUENTIAL, () => `auto is not supported by ${by}; only 5.0, 5.0 Lite, 4.5 and 4.0 generate series`),
    sequential_image_generation_options: caps.sequential
      ? z
          .looseObject({ max_images: int(1, SEQUENTIAL_MAX_TOTAL) }, { error: 'must be an object such as {"max_images": 4}' })
          .nullish()
          .meta({
            description: `the most images of the series; references plus images at most ${SEQUENTIAL_MAX_TOTAL} (reserved on that most, charged on the images returned)`,
          })
      : notForModel(`not supported by ${by}`),
    seed: z.number({ error: 'must be an integer' }).refine(Number.isSafeInteger, 'must be an integer').nullish().meta({ type: 'integer' }),
    guidance_scale: z.number({ error: 'must be a finite number' }).nullish(),
    watermark: bool(),
    optimize_prompt: bool(),
    optimize_prompt_options: z
      .looseObject(
        {
          mode: caps.fastPrompt
            ? z.enum(PROMPT_MODES, { error: PROMPT_MODE_RULE }).nullish()
            : z
                .enum(['standard'], { error: (issue) => (issue.input === 'fast' ? `fast is only available on 5.0 Pro and 4.0, not ${by}` : PROMPT_MODE_RULE) })
                .nullish(),
        },
        { error: PROMPT_OPTIONS_RULE },
      )
      .nullish(),
    output_format: caps.outputFormat
      ? oneOf(OUTPUT_FORMATS)
      : notForModel(`not supported by ${by}; only 5.0-series models take it`, { values: OUTPUT_FORMATS, rule: enumRule(OUTPUT_FORMATS) }),
    background:
      caps.layers && endpoint === 'generate'
        ? onlySome(['opaque'], BACKGROUNDS, () => `transparent on ${by} needs exactly one reference image (got 0); it is unavailable for text-only generation`)
        : oneOf(BACKGROUNDS).meta({
            description: caps.layers ? 'transparent needs exactly one reference image and not output_format jpeg' : 'forwarded',
          }),
    tools: caps.tools
      ? z.array(tool, { error: TOOLS_RULE }).min(1, TOOLS_RULE).max(MAX_TOOLS, TOOLS_RULE).nullish().meta({ description: 'forwarded as given' })
      : notForModel(`not supported by ${by}; only 5.0 and 5.0 Lite take tools`),
    response_format: oneOf(RESPONSE_FORMATS).meta({ description: 'b64_json adds each image as Base64 beside its url; default url' }),
  };
}

const MODEL_LIST = picgenSyncModels.join(', ');

/** A union on `model` (or `layer_decomposition`): an unknown model is refused naming them all. */
const modelError = (issue: { input: unknown }) => {
  if (!isPlainObject(issue.input)) return 'must be a JSON object';
  return absent(issue.input.model) ? `required, one of ${MODEL_LIST}` : `must be one of ${MODEL_LIST}`;
};

// ---- generations --------------------------------------------------------------------------------

const generationOf = <M extends PicgenSyncModel>(model: M) =>
  jsonBody({
    model: z.literal(model),
    prompt,
    image: notTaken(REFERENCES_ON_GENERATIONS),
    images: notTaken(REFERENCES_ON_GENERATIONS),
    layer_decomposition: z
      .literal(false, { error: (issue) => (issue.input === true ? LAYERS_ON_GENERATIONS : 'must be true or false') })
      .nullish()
      .meta({ description: 'only false here: layer decomposition is an edit' }),
    size: size(model, false),
    ...leading,
    mask: notTaken(MASK_REFUSAL),
    ...trailing(model, 'generate'),
  });

const [firstGeneration, ...moreGenerations] = picgenSyncModels.map(generationOf);

/** `POST /v1/images/generations` for a picgen model. */
export const GenerationBody = z.discriminatedUnion('model', [firstGeneration!, ...moreGenerations], { error: modelError });

// ---- edits --------------------------------------------------------------------------------------

const editOf = <M extends PicgenSyncModel>(model: M, layers: boolean) => {
  const caps = PICGEN_CAPABILITIES[model];
  const layerField = layers
    ? z.literal(true).meta({ description: 'split the one reference image into layers; the prompt is then optional' })
    : caps.layers
      ? z.literal(false).nullish()
      : z
          .literal(false, {
            error: (issue) =>
              issue.input === true ? `not supported by ${model} (${caps.label}); only 5.0 Pro and 5.0 Flash decompose layers` : 'must be true or false',
          })
          .nullish();
  return jsonBody({
    model: z.literal(model),
    layer_decomposition: layerField,
    mask: notTaken(MASK_REFUSAL),
    image: references(caps.maxReferences, layers),
    prompt: layers ? optionalString(MAX_PROMPT_CHARS).meta({ description: `at most ${MAX_PROMPT_CHARS} characters` }) : prompt,
    size: size(model, layers),
    ...leading,
    ...trailing(model, 'edit'),
  });
};

/** A model's edit body; with layers, a union on `layer_decomposition`. */
function editsOf(model: PicgenSyncModel) {
  if (!PICGEN_CAPABILITIES[model].layers) return editOf(model, false);
  return z.discriminatedUnion('layer_decomposition', [editOf(model, true), editOf(model, false)], { error: 'must be true or false' });
}

const [firstEdit, ...moreEdits] = picgenSyncModels.map(editsOf);

/** `POST /v1/images/edits`, JSON or the decoded form. */
export const EditBody = z.discriminatedUnion('model', [firstEdit!, ...moreEdits], { error: modelError });

/** The object shapes a union holds, through nested unions. */
const shapesOf = (schema: unknown): object[] => {
  const { shape, options } = schema as { shape?: object; options?: unknown[] };
  return shape ? [shape] : (options ?? []).flatMap(shapesOf);
};

/** Every field an edit body of some model names (a form may repeat only the others: multipart.ts). */
export const EDIT_FIELDS: ReadonlySet<string> = new Set(shapesOf(EditBody).flatMap((shape) => Object.keys(shape)));

export type PicgenGenerationRequest = z.output<typeof GenerationBody>;
export type PicgenEditRequest = z.output<typeof EditBody>;

export const PicgenAnswer = z.strictObject({
  created: z.int().nonnegative().meta({ description: 'when the call completed, Unix seconds' }),
  data: z.array(
    z.strictObject({
      url: z.string().meta({ description: 'a signed link to the re-hosted image, or the upstream URL when the gateway could not fetch it' }),
      b64_json: z.string().optional().meta({ description: 'the image as Base64, with response_format b64_json' }),
    }),
  ),
});
export type PicgenAnswerBody = z.infer<typeof PicgenAnswer>;
