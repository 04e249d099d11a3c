/**
 * Request rules of the synchronous picgen endpoints: `POST /v1/images/generations` (spec 4.7)
 * and `POST /v1/images/edits` (4.8, after multipart is turned into the same body). Pure: a
 * body in, a plan (what is sent upstream, what is recorded, what is reserved) or the first
 * refusal `{param, message}` out. The URL policy on reference URLs is the route's.
 */
import { picgenSyncModels } from './catalog.js';
import {
  type Body,
  checkLength,
  field,
  isHttpUrl,
  isImageDataUri,
  isPlainObject,
  MAX_PROMPT_CHARS,
  readPrompt,
  redactDataUris,
  refuse,
} from '../kit/fields.js';
import { capabilitiesOf, isPicgenSyncModel, SEQUENTIAL_MAX_TOTAL, type PicgenSyncModel } from './capabilities.js';
import { MASK_REFUSAL, readCommonFields } from './fields.js';
import { readPicgenSize } from './size.js';
import { planned, type PlanResult } from '../kit/plan.js';

/** Largest reference image, as a file or a data URI (spec 4.8: 30 MiB per file). */
export const MAX_REFERENCE_BYTES = 30 * 1024 * 1024;

export const IMAGE_REQUIRED = 'required: one reference image or an array of them (http/https URLs or data:image/<format>;base64,… URIs)';
/** Why `image` or `images` (even null) is refused on generations. */
export const REFERENCES_ON_GENERATIONS = 'reference images are not taken by /v1/images/generations; send them to /v1/images/edits';
export const LAYERS_ON_GENERATIONS = 'true needs exactly one reference image and cannot be used on /v1/images/generations; use /v1/images/edits';

export interface PicgenPlan {
  model: PicgenSyncModel;
  action: 'generate' | 'edit' | 'layers';
  /** Images the reservation is quoted on. */
  units: number;
  /** Size preset the price is looked up for (estimate when size is omitted). */
  tier: string;
  /** Sent upstream: known fields only. */
  upstream: Record<string, unknown>;
  /** Recorded in TaskSubmitted: `upstream` with data URIs shortened. */
  recorded: Record<string, unknown>;
  responseFormat: 'url' | 'b64_json';
}

export type PicgenPlanResult = PlanResult<PicgenPlan>;

function readModel(body: Body): PicgenSyncModel {
  const model = field(body, 'model');
  if (model === undefined) refuse('model', `required, one of ${picgenSyncModels.join(', ')}`);
  if (!isPicgenSyncModel(model)) refuse('model', `must be one of ${picgenSyncModels.join(', ')}`);
  return model;
}

function readLayers(body: Body): boolean {
  const value = field(body, 'layer_decomposition');
  if (value !== undefined && typeof value !== 'boolean') refuse('layer_decomposition', 'must be true or false');
  return value === true;
}

function dataUriBytes(uri: string): number {
  const payload = uri.slice(uri.indexOf(',') + 1);
  return Math.floor((payload.length * 3) / 4);
}

const REFERENCE_RULE = 'must be an http/https URL or a data:image/<lowercase format>;base64,<data> URI';
const isReference = (item: unknown): item is string => typeof item === 'string' && (isHttpUrl(item) || isImageDataUri(item));

/** Why one reference image is refused, or undefined when it is taken. */
export function referenceProblem(item: unknown): string | undefined {
  if (!isReference(item)) return REFERENCE_RULE;
  if (item.startsWith('data:') && dataUriBytes(item) > MAX_REFERENCE_BYTES) return `is larger than ${MAX_REFERENCE_BYTES} bytes`;
  return undefined;
}

function readImages(body: Body, max: number): { value: string | string[]; list: string[] } {
  const value = field(body, 'image');
  if (value === undefined) refuse('image', IMAGE_REQUIRED);
  const list: unknown[] = Array.isArray(value) ? value : [value];
  if (list.length === 0 || list.length > max) refuse('image', `must hold 1 to ${max} reference images for this model, got ${list.length}`);
  const checked = list.map((item, index) => {
    const where = Array.isArray(value) ? `image.${index}` : 'image';
    if (!isReference(item)) refuse(where, REFERENCE_RULE);
    const problem = referenceProblem(item);
    if (problem !== undefined) refuse(where, problem);
    return item;
  });
  return { value: Array.isArray(value) ? checked : (checked[0] ?? ''), list: checked };
}

function finish(draft: Omit<PicgenPlan, 'recorded'>): PicgenPlan {
  const recorded = redactDataUris(draft.upstream);
  return { ...draft, recorded: isPlainObject(recorded) ? recorded : {} };
}

function generation(body: unknown): PicgenPlan {
  if (!isPlainObject(body)) refuse('body', 'must be a JSON object');
  const model = readModel(body);
  const caps = capabilitiesOf(model);
  const prompt = readPrompt(body);
  for (const key of ['image', 'images']) {
    if (Object.hasOwn(body, key)) refuse(key, REFERENCES_ON_GENERATIONS);
  }
  if (readLayers(body)) refuse('layer_decomposition', LAYERS_ON_GENERATIONS);
  const size = readPicgenSize(body, caps, model, 'generate');
  const common = readCommonFields(body, caps, model, 0);
  const upstream: Record<string, unknown> = { model, prompt, ...(size.upstream !== undefined ? { size: size.upstream } : {}), ...common.upstream };
  return finish({ model, action: 'generate', units: common.outputs, tier: size.tier, upstream, responseFormat: common.responseFormat });
}

function edit(body: unknown): PicgenPlan {
  if (!isPlainObject(body)) refuse('body', 'must be a JSON object');
  const model = readModel(body);
  const caps = capabilitiesOf(model);
  const layers = readLayers(body);
  if (layers && !caps.layers) refuse('layer_decomposition', `not supported by ${model} (${caps.label}); only 5.0 Pro and 5.0 Flash decompose layers`);
  if (Object.hasOwn(body, 'mask')) refuse('mask', MASK_REFUSAL);
  const images = readImages(body, caps.maxReferences);
  if (layers && images.list.length !== 1) refuse('image', `layer decomposition needs exactly one input image, got ${images.list.length}`);
  let prompt: string | undefined;
  if (!layers) prompt = readPrompt(body);
  else if (Object.hasOwn(body, 'prompt') && body.prompt !== null) {
    if (typeof body.prompt !== 'string') refuse('prompt', 'must be a string');
    checkLength(body.prompt, 'prompt', MAX_PROMPT_CHARS);
    prompt = body.prompt;
  }
  const size = readPicgenSize(body, caps, model, layers ? 'layers' : 'edit');
  const common = readCommonFields(body, caps, model, images.list.length);
  const upstream: Record<string, unknown> = {
    model,
    ...(prompt !== undefined ? { prompt } : {}),
    image: images.value,
    ...(size.upstream !== undefined ? { size: size.upstream } : {}),
    ...(layers ? { layer_decomposition: true } : {}),
    ...common.upstream,
  };
  return finish({
    model,
    action: layers ? 'layers' : 'edit',
    // The upstream decides how many layers; settlement never charges more images than the
    // reservation records, so a decomposition reserves the most it may return (like sequential
    // generation without max_images: 15 minus the one reference) and settles on those returned.
    units: layers ? SEQUENTIAL_MAX_TOTAL - images.list.length : common.outputs,
    tier: size.tier,
    upstream,
    responseFormat: common.responseFormat,
  });
}

const run = (plan: (body: unknown) => PicgenPlan, body: unknown): PicgenPlanResult => planned(() => plan(body));

export const planPicgenGeneration = (body: unknown): PicgenPlanResult => run(generation, body);
export const planPicgenEdit = (body: unknown): PicgenPlanResult => run(edit, body);
