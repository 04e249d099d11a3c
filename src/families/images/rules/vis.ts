/**
 * `vis` models on the async route (spec 4.9). Without a reference image it is a generation
 * (generation models only, `n` 1–4); with `image` / `images` it is an edit (edit models only,
 * public URLs merged and deduplicated, at most 5, one output image). `size` is an aspect ratio
 * or a pixel size mapped to the nearest ratio the model allows; `quality` reaches the upstream
 * only for `vis-imagine-image-2.0`. The schema (../schema.ts) checks each field for its model;
 * whether the task is an edit depends on which fields are given, so what follows from that is
 * decided here.
 */
import { visEditModels, visGenerationModels } from '../catalog.js';
import { type FamilyDraft, isOneOf, parsePixelSize, refuse } from '../../kit/fields.js';
import { given } from '../../kit/schema.js';
import type { VisEditRequest, VisRequest } from '../schema.js';

export const VIS_MAX_N = 4;
export const VIS_EDIT_MAX_REFERENCES = 5;
export const VIS_DEFAULT_SIZE = '1:1';
export const VIS_EDIT_N = 'must be 1 for vis edits (each edit returns exactly one image)';

export const VIS_BASIC_RATIOS = ['1:1', '16:9', '9:16', '3:2', '2:3'] as const;
export const VIS_EXTENDED_RATIOS = [...VIS_BASIC_RATIOS, '4:3', '3:4', '21:9', '9:21', '2:1', '1:2'] as const;

/** Models limited to the basic ratios (no `auto`): the 1.0 and 2.0 lines, edit variants included. */
const BASIC_RATIO_MODELS: readonly string[] = ['vis-imagine-1.0', 'vis-imagine-2.0', 'vis-imagine-1.0-edit', 'vis-imagine-2.0-edit'];
const QUALITY_MODELS: readonly string[] = ['vis-imagine-image-2.0'];
export const VIS_QUALITIES = ['low', 'medium'] as const;

/** The ratios a model takes. */
export const visRatiosOf = (model: string): readonly string[] => (BASIC_RATIO_MODELS.includes(model) ? VIS_BASIC_RATIOS : VIS_EXTENDED_RATIOS);

/** Why a model refuses a `size`, or undefined when it takes it (a ratio it allows, `auto` on the newer models, or a pixel size). */
export function visSizeFault(model: string, size: string): string | undefined {
  const basic = BASIC_RATIO_MODELS.includes(model);
  const ratios = visRatiosOf(model);
  if (size === 'auto') return basic ? `auto is not supported by ${model}; use one of ${ratios.join(', ')} or a pixel size` : undefined;
  if (ratios.includes(size) || parsePixelSize(size)) return undefined;
  return visSizeRule(model);
}

export const visSizeRule = (model: string): string =>
  `must be one of ${visRatiosOf(model).join(', ')}${BASIC_RATIO_MODELS.includes(model) ? '' : ', auto'} or a pixel size such as 1024x1024 (for ${model})`;

/** The listed ratio closest to w/h on a log scale; ties go to the earlier entry. */
export function nearestRatio(width: number, height: number, ratios: readonly string[]): string {
  const target = Math.log(width / height);
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const ratio of ratios) {
    const [a, b] = ratio.split(':').map(Number);
    if (a === undefined || b === undefined) continue;
    const distance = Math.abs(Math.log(a / b) - target);
    if (distance < bestDistance - 1e-12) {
      best = ratio;
      bestDistance = distance;
    }
  }
  return best ?? VIS_DEFAULT_SIZE;
}

/** The size sent upstream: a pixel size becomes the nearest ratio the model takes. */
function sizeOf(body: VisRequest): string {
  const size = body.size ?? undefined;
  if (size === undefined) return VIS_DEFAULT_SIZE;
  const pixels = parsePixelSize(size);
  return pixels ? nearestRatio(pixels.width, pixels.height, visRatiosOf(body.model)) : size;
}

function withQuality(body: VisRequest, upstream: Record<string, unknown>): Record<string, unknown> {
  const quality = body.quality ?? undefined;
  if (quality !== undefined && QUALITY_MODELS.includes(body.model)) upstream.quality = quality;
  return upstream;
}

function generationRules(body: VisRequest): FamilyDraft {
  const { model, prompt } = body;
  if (!isOneOf(visGenerationModels, model)) refuse('image', `${model} is an edit model and needs a reference image (image or images)`);
  const n = body.n ?? 1;
  return { action: 'generate', units: n, upstream: withQuality(body, { model, prompt, n, size: sizeOf(body) }) };
}

function editRules(body: VisEditRequest): FamilyDraft {
  const { model, prompt } = body;
  const image = body.image ?? undefined;
  const merged = [...new Set([...(image !== undefined ? [image] : []), ...(body.images ?? [])])];
  if (merged.length > VIS_EDIT_MAX_REFERENCES) {
    refuse('images', `at most ${VIS_EDIT_MAX_REFERENCES} distinct reference URLs (image and images together), got ${merged.length}`);
  }
  return { action: 'edit', units: 1, upstream: withQuality(body, { model, prompt, images: merged, size: sizeOf(body) }) };
}

const takesReferences = (body: VisRequest): body is VisEditRequest => isOneOf(visEditModels, body.model);

export function visRules(body: VisRequest): FamilyDraft {
  if (!given(body.image) && !given(body.images)) return generationRules(body);
  if (!takesReferences(body)) refuse('model', `${body.model} does not take reference images; use ${body.model}-edit`);
  return editRules(body);
}
