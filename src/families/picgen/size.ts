/**
 * `size` of the synchronous picgen endpoints (spec 4.7, 4.8): a preset of the model's row
 * (case-insensitive), or `<width>x<height>` (separator `x`, `X`, `×` or `*`) with positive
 * integer sides, a pixel area within the row's range and an aspect ratio from 1:16 to 16:1.
 * Layer decomposition takes only `1K`, `1.5K`, `2K` or `auto`. The schema refuses a size with
 * the problems found here (schema.ts); the plan reads the size it took. An omitted size is
 * estimated for pricing (2K on generations, `auto` on edits: the output follows the input) and
 * not sent upstream.
 */
import { LAYER_SIZES, type PicgenCapabilities } from './capabilities.js';

export const MAX_ASPECT_RATIO = 16;
export const DEFAULT_SIZE_ESTIMATE = '2K';
export const EDIT_SIZE_ESTIMATE = 'auto';

/** Pixel area of each preset, for pricing custom dimensions at the nearest preset. */
const PRESET_AREAS: ReadonlyArray<readonly [string, number]> = [
  ['1K', 1024 * 1024],
  ['1.5K', 1536 * 1536],
  ['2K', 2048 * 2048],
  ['3K', 3072 * 3072],
  ['4K', 4096 * 4096],
];

export interface PicgenSize {
  /** What is sent upstream (canonical preset or `<w>x<h>`); undefined when omitted. */
  upstream: string | undefined;
  /** Pricing tier: the preset, the nearest preset by area for custom sizes, or the estimate. */
  tier: string;
}

/** `<width>x<height>`; digits as [0-9], which means the same in the document's patterns (in Python's `re`, `\d` takes any Unicode digit). */
const CUSTOM_SOURCE = '([1-9][0-9]{0,5})[xX×*]([1-9][0-9]{0,5})';
const CUSTOM = new RegExp(`^${CUSTOM_SOURCE}$`, 'u');

export function parseCustomSize(text: string): { width: number; height: number } | undefined {
  const match = CUSTOM.exec(text);
  if (!match) return undefined;
  return { width: Number(match[1]), height: Number(match[2]) };
}

function presetOf(text: string, presets: readonly string[]): string | undefined {
  const lower = text.toLowerCase();
  return presets.find((p) => p.toLowerCase() === lower);
}

/** The preset whose area is closest to `area` on a log scale. */
export function nearestPreset(area: number): string {
  let best = DEFAULT_SIZE_ESTIMATE;
  let distance = Infinity;
  for (const [name, presetArea] of PRESET_AREAS) {
    const d = Math.abs(Math.log(area / presetArea));
    if (d < distance) {
      best = name;
      distance = d;
    }
  }
  return best;
}

function describe(caps: PicgenCapabilities, model: string): string {
  return `must be one of ${caps.presets.join(', ')} (case-insensitive) or <width>x<height> with a pixel area from ${caps.minArea} to ${caps.maxArea} and an aspect ratio from 1:16 to 16:1 (for ${model})`;
}

/** A preset as a pattern matching it in any case (`1.5K` → `1\\.5[Kk]`). */
const anyCase = (preset: string) => [...preset].map((c) => (/[a-z]/i.test(c) ? `[${c.toUpperCase()}${c.toLowerCase()}]` : c.replace('.', '\\.'))).join('');

/**
 * The document's pattern of a size: the presets in any case, and (`custom`) `<width>x<height>`.
 * The area and the ratio are arithmetic, which a pattern cannot say: the rules check them.
 */
export function sizePattern(presets: readonly string[], custom: boolean): string {
  const options = [...presets.map(anyCase), ...(custom ? [CUSTOM_SOURCE] : [])];
  return `^(?:${options.join('|')})$`;
}

/** Why a size is refused for a model's generation or edit (not a layer decomposition), or undefined when it is taken. */
export function sizeProblem(text: string, caps: PicgenCapabilities, model: string): string | undefined {
  if (text.toLowerCase() === 'auto') return 'auto is only valid for layer decomposition on /v1/images/edits';
  if (presetOf(text, caps.presets)) return undefined;
  const dims = parseCustomSize(text);
  if (!dims) return describe(caps, model);
  const { width, height } = dims;
  if (Math.max(width, height) > MAX_ASPECT_RATIO * Math.min(width, height)) return `aspect ratio ${width}:${height} is outside 1:16 to 16:1`;
  const area = width * height;
  if (area < caps.minArea || area > caps.maxArea) return `${width}x${height} has ${area} pixels; ${model} takes ${caps.minArea} to ${caps.maxArea}`;
  return undefined;
}

/** Why a size is refused for a layer decomposition, or undefined when it is taken. */
export function layerSizeProblem(text: string): string | undefined {
  return presetOf(text, LAYER_SIZES) ? undefined : `must be one of ${LAYER_SIZES.join(', ')} for layer decomposition (no custom dimensions)`;
}

/** The size a schema took (sizeProblem, layerSizeProblem), as sent upstream and priced. */
export function sizeOf(text: string | null | undefined, caps: PicgenCapabilities, endpoint: 'generate' | 'edit' | 'layers'): PicgenSize {
  if (text === undefined || text === null) return { upstream: undefined, tier: endpoint === 'generate' ? DEFAULT_SIZE_ESTIMATE : EDIT_SIZE_ESTIMATE };
  const preset = presetOf(text, endpoint === 'layers' ? LAYER_SIZES : caps.presets);
  if (preset) return { upstream: preset, tier: preset };
  const { width, height } = parseCustomSize(text) ?? { width: 0, height: 0 };
  return { upstream: `${width}x${height}`, tier: nearestPreset(width * height) };
}
