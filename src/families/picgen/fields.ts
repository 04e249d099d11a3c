/**
 * The plan of the fields both synchronous picgen endpoints take (spec 4.7, 4.8), over a body
 * their schema parsed (schema.ts: each field's shape, and what the model takes): what ties them
 * to the references (a series' references plus images, a transparent background on 5.0 Pro and
 * 5.0 Flash), the size of the forwarded tools, and what is sent upstream (known fields only).
 *
 * A capability's "off" value (`sequential_image_generation: disabled`) is accepted by every
 * model and forwarded only to models that have the capability.
 */
import { checkForwarded, refuse } from '../kit/fields.js';
import { given } from '../kit/schema.js';
import { type PicgenCapabilities, type PicgenSyncModel, SEQUENTIAL_MAX_TOTAL } from './capabilities.js';
import type { PicgenEditRequest, PicgenGenerationRequest } from './schema.js';

export type PicgenRequest = PicgenGenerationRequest | PicgenEditRequest;

export interface CommonFields {
  upstream: Record<string, unknown>;
  /** Images the reservation is quoted on. */
  outputs: number;
  responseFormat: 'url' | 'b64_json';
}

function sequentialOf(body: PicgenRequest, caps: PicgenCapabilities, references: number): { upstream: Record<string, unknown>; outputs: number } {
  const upstream: Record<string, unknown> = {};
  if (!caps.sequential) return { upstream, outputs: 1 };
  // Typed as the first model's row takes it; the schema took the value for this model's.
  const mode: string | null | undefined = body.sequential_image_generation;
  const max = body.sequential_image_generation_options?.max_images;
  if (given(mode)) upstream.sequential_image_generation = mode;
  if (given(max)) upstream.sequential_image_generation_options = { max_images: max };
  if (mode !== 'auto') return { upstream, outputs: 1 };
  // A maximum, not a promise: reserve for the most the upstream may return.
  const outputs = max ?? SEQUENTIAL_MAX_TOTAL - references;
  if (outputs < 1 || references + outputs > SEQUENTIAL_MAX_TOTAL) {
    refuse(
      'sequential_image_generation_options.max_images',
      `reference images (${references}) plus images asked for (${max ?? 0}) must total at most ${SEQUENTIAL_MAX_TOTAL}`,
    );
  }
  return { upstream, outputs };
}

/** `optimize_prompt_options` as forwarded: null as given, else only its mode. */
function promptOptionsOf(body: PicgenRequest): Record<string, unknown> | null | undefined {
  const options = body.optimize_prompt_options;
  if (options === undefined || options === null) return options;
  return given(options.mode) ? { mode: options.mode } : {};
}

/** A transparent background on a layer model needs exactly one reference and not jpeg. */
function checkBackground(body: PicgenRequest, caps: PicgenCapabilities, model: PicgenSyncModel, references: number): void {
  const background: string | null | undefined = body.background;
  if (background !== 'transparent' || !caps.layers) return;
  if (references !== 1)
    refuse(
      'background',
      `transparent on ${model} (${caps.label}) needs exactly one reference image (got ${references}); it is unavailable for text-only generation`,
    );
  if (body.output_format === 'jpeg') refuse('background', 'transparent cannot be combined with output_format jpeg');
}

/** Every field except prompt, image, size and layer_decomposition. */
export function commonOf(body: PicgenRequest, caps: PicgenCapabilities, model: PicgenSyncModel, references: number): CommonFields {
  const sequential = sequentialOf(body, caps, references);
  const upstream: Record<string, unknown> = { ...sequential.upstream };
  for (const key of ['seed', 'guidance_scale', 'watermark', 'optimize_prompt'] as const) if (given(body[key])) upstream[key] = body[key];
  const promptOptions = promptOptionsOf(body);
  if (promptOptions !== undefined) upstream.optimize_prompt_options = promptOptions;
  checkBackground(body, caps, model, references);
  if (given(body.output_format)) upstream.output_format = body.output_format;
  if (given(body.background)) upstream.background = body.background;
  if (given(body.tools)) {
    // Tools are forwarded as given (their support depends on the upstream), so only their size is bounded.
    checkForwarded(body.tools, 'tools');
    upstream.tools = body.tools.map((tool) => ({ ...tool }));
  }
  // The upstream is asked for its default (URLs); the gateway adds Base64 itself (spec 4.7).
  return { upstream, outputs: sequential.outputs, responseFormat: body.response_format ?? 'url' };
}
