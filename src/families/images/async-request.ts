/**
 * Request rules of `POST /v1/images/async/generations` (spec 4.9, limits 8) over the body the
 * route's schema parsed (schema.ts): the model selects the family, whose rules decide what the
 * fields alone cannot say and build the upstream body (known fields only, spec defaults applied)
 * and the number of images the reservation is quoted on. Pure: the same body always gives the
 * same answer; the URL policy (src/families/kit/url-policy.ts) runs on the fields of
 * ASYNC_IMAGE_URL_FIELDS.
 */
import { animeModels, picgenAsyncModels, visEditModels, visGenerationModels } from './catalog.js';
import { animeRules } from './rules/anime.js';
import { picgenRules } from './rules/picgen.js';
import { proImageDraft } from '../kit/pro-image-rules.js';
import { type FamilyDraft, isOneOf, recordedCopy } from '../kit/fields.js';
import { visRules } from './rules/vis.js';
import type { UrlFieldSpec } from '../kit/url-fields.js';
import { planners } from '../kit/plan.js';
import { type AnimeRequest, AsyncImageBody, type AsyncImageRequest, PRO_IMAGE_MODEL, type VisRequest } from './schema.js';

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

const REFERENCES: readonly UrlFieldSpec[] = [{ path: 'image' }, { path: 'images.*' }];

/** The fields each family reads URLs from; picgen also forwards `metadata` as given. */
export const ASYNC_IMAGE_URL_FIELDS: Readonly<Record<AsyncImageFamily, readonly UrlFieldSpec[]>> = {
  'pro-image': REFERENCES,
  anime: REFERENCES,
  vis: REFERENCES,
  picgen: [...REFERENCES, { path: 'metadata.**' }],
};

/** The async image family of a model name, or undefined when this endpoint does not serve it. */
export function asyncImageFamilyOf(model: string): AsyncImageFamily | undefined {
  if (model === PRO_IMAGE_MODEL) return 'pro-image';
  if (isOneOf(animeModels, model)) return 'anime';
  if (isOneOf(visGenerationModels, model) || isOneOf(visEditModels, model)) return 'vis';
  if (isOneOf(picgenAsyncModels, model)) return 'picgen';
  return undefined;
}

const isAnime = (body: AsyncImageRequest): body is AnimeRequest => asyncImageFamilyOf(body.model) === 'anime';
const isVis = (body: AsyncImageRequest): body is VisRequest => asyncImageFamilyOf(body.model) === 'vis';

/** The family of the body's model and what its rules decide. */
function draftOf(body: AsyncImageRequest): FamilyDraft & { family: AsyncImageFamily } {
  if (body.model === PRO_IMAGE_MODEL) return { family: 'pro-image', ...proImageDraft(body, body.model, body.prompt) };
  if (isAnime(body)) return { family: 'anime', ...animeRules(body) };
  if (isVis(body)) return { family: 'vis', ...visRules(body) };
  return { family: 'picgen', ...picgenRules(body) };
}

function plan(body: AsyncImageRequest): AsyncImagePlan {
  const { family, action, units, upstream } = draftOf(body);
  return { family, action, model: body.model, units, upstream, recorded: recordedCopy(upstream) };
}

export const { parsed: planAsyncImage, raw: planAsyncImageRequest } = planners(AsyncImageBody, plan);
