/**
 * `vis` models on the async route (spec 4.9). Without a reference image it is a generation
 * (generation models only, `n` 1–4); with `image` / `images` it is an edit (edit models only,
 * public URLs merged and deduplicated, at most 5, one output image). `size` is an aspect ratio
 * or a pixel size mapped to the nearest ratio the model allows; `quality` reaches the upstream
 * only for `vis-imagine-image-2.0`.
 */
import { visEditModels, visGenerationModels } from '../catalog.js';
import { type Body, type FamilyDraft, field, has, isOneOf, parsePixelSize, readInt, readRef, readRefList, refuse } from '../../kit/fields.js';

export const VIS_MAX_N = 4;
export const VIS_EDIT_MAX_REFERENCES = 5;
export const VIS_DEFAULT_SIZE = '1:1';

export const VIS_BASIC_RATIOS = ['1:1', '16:9', '9:16', '3:2', '2:3'] as const;
export const VIS_EXTENDED_RATIOS = [...VIS_BASIC_RATIOS, '4:3', '3:4', '21:9', '9:21', '2:1', '1:2'] as const;

/** Models limited to the basic ratios (no `auto`): the 1.0 and 2.0 lines, edit variants included. */
const BASIC_RATIO_MODELS: readonly string[] = ['vis-imagine-1.0', 'vis-imagine-2.0', 'vis-imagine-1.0-edit', 'vis-imagine-2.0-edit'];
const QUALITY_MODELS: readonly string[] = ['vis-imagine-image-2.0'];
const QUALITIES = ['low', 'medium'] as const;

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

function readSize(body: Body, model: string): string {
  const size = field(body, 'size');
  if (size === undefined) return VIS_DEFAULT_SIZE;
  const basic = BASIC_RATIO_MODELS.includes(model);
  const ratios: readonly string[] = basic ? VIS_BASIC_RATIOS : VIS_EXTENDED_RATIOS;
  if (typeof size === 'string') {
    if (size === 'auto') {
      if (basic) refuse('size', `auto is not supported by ${model}; use one of ${ratios.join(', ')} or a pixel size`);
      return size;
    }
    if (ratios.includes(size)) return size;
    const pixels = parsePixelSize(size);
    if (pixels) return nearestRatio(pixels.width, pixels.height, ratios);
  }
  return refuse('size', `must be one of ${ratios.join(', ')}${basic ? '' : ', auto'} or a pixel size such as 1024x1024 (for ${model})`);
}

function readQuality(body: Body, model: string): (typeof QUALITIES)[number] | undefined {
  const quality = field(body, 'quality');
  if (quality === undefined) return undefined;
  if (!isOneOf(QUALITIES, quality)) refuse('quality', 'must be low or medium');
  return QUALITY_MODELS.includes(model) ? quality : undefined;
}

function generationRules(body: Body, model: string, prompt: string): FamilyDraft {
  if (!isOneOf(visGenerationModels, model)) {
    refuse('image', `${model} is an edit model and needs a reference image (image or images)`);
  }
  const n = readInt(body, 'n', 1, VIS_MAX_N) ?? 1;
  const size = readSize(body, model);
  const quality = readQuality(body, model);
  const upstream: Record<string, unknown> = { model, prompt, n, size };
  if (quality !== undefined) upstream.quality = quality;
  return { action: 'generate', units: n, upstream };
}

function editRules(body: Body, model: string, prompt: string): FamilyDraft {
  if (!isOneOf(visEditModels, model)) {
    refuse('model', `${model} does not take reference images; use ${model}-edit`);
  }
  const image = readRef(body, 'image', 'url');
  const images = readRefList(body, 'images', 'url', undefined);
  const merged = [...new Set([...(image !== undefined ? [image] : []), ...(images ?? [])])];
  if (merged.length > VIS_EDIT_MAX_REFERENCES) {
    refuse('images', `at most ${VIS_EDIT_MAX_REFERENCES} distinct reference URLs (image and images together), got ${merged.length}`);
  }
  const n = field(body, 'n');
  if (n !== undefined && n !== 1) refuse('n', 'must be 1 for vis edits (each edit returns exactly one image)');
  const size = readSize(body, model);
  const quality = readQuality(body, model);
  const upstream: Record<string, unknown> = { model, prompt, images: merged, size };
  if (quality !== undefined) upstream.quality = quality;
  return { action: 'edit', units: 1, upstream };
}

export function visRules(body: Body, model: string, prompt: string): FamilyDraft {
  return has(body, 'image') || has(body, 'images') ? editRules(body, model, prompt) : generationRules(body, model, prompt);
}
