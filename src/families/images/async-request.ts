/**
 * Request rules of `POST /v1/images/async/generations` (spec 4.9, limits 8): the model selects
 * the family, the family's rules check every field and build the upstream body (known fields
 * only, spec defaults applied) and the number of images the reservation is quoted on.
 * Pure: the same body always gives the same answer; the URL policy (src/families/url-policy.ts)
 * runs on the fields of ASYNC_IMAGE_URL_FIELDS.
 */
import { animeModels, picgenAsyncModels, visEditModels, visGenerationModels } from './catalog.js';
import { animeRules } from './rules/anime.js';
import { picgenRules } from './rules/picgen.js';
import { proImageRules } from '../kit/pro-image-rules.js';
import { type Body, type FamilyDraft, field, isOneOf, isPlainObject, readPrompt, redactDataUris, refuse } from '../kit/fields.js';
import { visRules } from './rules/vis.js';
import type { UrlFieldSpec } from '../kit/url-fields.js';
import { planned, type PlanResult } from '../kit/plan.js';

export type AsyncImageFamily = 'pro-image' | 'anime' | 'vis' | 'picgen';

export interface AsyncImagePlan {
  family: AsyncImageFamily;
  /** edit = image-to-image / vis edit */
  action: 'generate' | 'edit';
  model: string;
  /** Images the reservation is quoted on (n; vis edit and picgen = 1). */
  units: number;
  /** What is sent upstream: only known fields, normalised (defaults applied where the spec states a default, e.g. anime size 1024x1024, vis size 1:1, n=1). */
  upstream: Record<string, unknown>;
  /** Request as recorded in the task event: the same as upstream but with inline Base64 data URIs replaced by a short placeholder like `data:image/png;base64,…(12345 bytes)` so events stay small. */
  recorded: Record<string, unknown>;
}

export type AsyncImageResult = PlanResult<AsyncImagePlan>;

const PRO_IMAGE_MODEL = 'pro-image';
const MODEL_ECHO_MAX = 64;

/** Every model this endpoint serves, for the declared contract (vis models that also edit appear once). */
export const ASYNC_IMAGE_MODELS: readonly string[] = [
  ...new Set<string>([PRO_IMAGE_MODEL, ...animeModels, ...visGenerationModels, ...visEditModels, ...picgenAsyncModels]),
];

export const MODEL_REQUIRED = 'required, the name of an async image model';

/** Why `model` is refused when it names no async image model (the name echoed, cut at 64 characters). */
export function notAsyncImageModel(model: string): string {
  const shown = model.length > MODEL_ECHO_MAX ? `${model.slice(0, MODEL_ECHO_MAX)}…` : model;
  return `${JSON.stringify(shown)} is not an async image model; this endpoint accepts pro-image and the anime, vis and picgen async models`;
}

type FamilyRules = (body: Body, model: string, prompt: string) => FamilyDraft;

const REFERENCES: readonly UrlFieldSpec[] = [{ path: 'image' }, { path: 'images.*' }];

/** The fields each family reads URLs from; picgen also forwards `metadata` as given. */
export const ASYNC_IMAGE_URL_FIELDS: Readonly<Record<AsyncImageFamily, readonly UrlFieldSpec[]>> = {
  'pro-image': REFERENCES,
  anime: REFERENCES,
  vis: REFERENCES,
  picgen: [...REFERENCES, { path: 'metadata.**' }],
};

const RULES: Readonly<Record<AsyncImageFamily, FamilyRules>> = {
  'pro-image': proImageRules,
  anime: animeRules,
  vis: visRules,
  picgen: picgenRules,
};

/** The async image family of a model name, or undefined when this endpoint does not serve it. */
export function asyncImageFamilyOf(model: string): AsyncImageFamily | undefined {
  if (model === PRO_IMAGE_MODEL) return 'pro-image';
  if (isOneOf(animeModels, model)) return 'anime';
  if (isOneOf(visGenerationModels, model) || isOneOf(visEditModels, model)) return 'vis';
  if (isOneOf(picgenAsyncModels, model)) return 'picgen';
  return undefined;
}

function readModel(body: Body): { model: string; family: AsyncImageFamily } {
  const model = field(body, 'model');
  if (model === undefined) refuse('model', MODEL_REQUIRED);
  if (typeof model !== 'string') refuse('model', 'must be a string');
  const family = asyncImageFamilyOf(model);
  if (!family) refuse('model', notAsyncImageModel(model));
  return { model, family };
}

function plan(body: unknown): AsyncImagePlan {
  if (!isPlainObject(body)) refuse('body', 'must be a JSON object');
  const { model, family } = readModel(body);
  const prompt = readPrompt(body);
  const { action, units, upstream } = RULES[family](body, model, prompt);
  const recorded = redactDataUris(upstream);
  return { family, action, model, units, upstream, recorded: isPlainObject(recorded) ? recorded : {} };
}

export const planAsyncImageRequest = (body: unknown): AsyncImageResult => planned(() => plan(body));
