/**
 * Field rules shared by the synchronous picgen endpoints (spec 4.7, 4.8): everything except
 * `prompt`, `image`, `size` and `layer_decomposition`. Each reader refuses with the field's
 * name; the result holds only known fields, in the form sent upstream.
 *
 * A capability's "off" value (`sequential_image_generation: disabled`) is accepted by every
 * model and forwarded only to models that have the capability; asking for the capability on
 * a model without it is refused.
 */
import { type Body, checkForwarded, field, isPlainObject, readEnum, refuse } from '../kit/fields.js';
import { type PicgenCapabilities, SEQUENTIAL_MAX_TOTAL } from './capabilities.js';

export const MAX_TOOLS = 16;
export const OUTPUT_FORMATS = ['png', 'jpeg'] as const;
export const BACKGROUNDS = ['opaque', 'transparent'] as const;
export const SEQUENTIAL = ['auto', 'disabled'] as const;
export const PROMPT_MODES = ['standard', 'fast'] as const;
export const RESPONSE_FORMATS = ['url', 'b64_json'] as const;

/** The refusals whose words the declared schema (schema.ts) repeats. */
export const N_RULE = 'must be 1 (one image per synchronous picgen call; use sequential_image_generation for series)';
export const STREAM_RULE = 'must be false or omitted; streaming is not supported for picgen';
export const MASK_REFUSAL = 'not supported; masked edits are not available for picgen';
export const PROMPT_OPTIONS_RULE = 'must be an object such as {"mode": "standard"} or null';
export const PROMPT_MODE_RULE = 'must be standard or fast';

export interface CommonFields {
  upstream: Record<string, unknown>;
  /** Images the reservation is quoted on. */
  outputs: number;
  responseFormat: 'url' | 'b64_json';
}

function readBoolean(body: Body, key: string): boolean | undefined {
  const value = field(body, key);
  if (value !== undefined && typeof value !== 'boolean') refuse(key, 'must be true or false');
  return value;
}

function readOnlyOne(body: Body, key: 'n' | 'stream'): void {
  const value = field(body, key);
  if (value === undefined) return;
  if (key === 'n' && value !== 1) refuse('n', N_RULE);
  if (key === 'stream' && value !== false) refuse('stream', STREAM_RULE);
}

function readSequential(body: Body, caps: PicgenCapabilities, model: string, references: number): { upstream: Record<string, unknown>; outputs: number } {
  const mode = readEnum(body, 'sequential_image_generation', SEQUENTIAL);
  const options = field(body, 'sequential_image_generation_options');
  if (mode === 'auto' && !caps.sequential)
    refuse('sequential_image_generation', `auto is not supported by ${model} (${caps.label}); only 5.0, 5.0 Lite, 4.5 and 4.0 generate series`);
  if (options !== undefined && !caps.sequential) refuse('sequential_image_generation_options', `not supported by ${model} (${caps.label})`);
  if (options !== undefined && !isPlainObject(options)) refuse('sequential_image_generation_options', 'must be an object such as {"max_images": 4}');
  const max = options === undefined ? undefined : field(options, 'max_images');
  if (max !== undefined && (typeof max !== 'number' || !Number.isInteger(max) || max < 1 || max > SEQUENTIAL_MAX_TOTAL)) {
    refuse('sequential_image_generation_options.max_images', `must be an integer from 1 to ${SEQUENTIAL_MAX_TOTAL}`);
  }
  const upstream: Record<string, unknown> = {};
  if (!caps.sequential) return { upstream, outputs: 1 };
  if (mode !== undefined) upstream.sequential_image_generation = mode;
  if (max !== undefined) upstream.sequential_image_generation_options = { max_images: max };
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

function readPromptOptions(body: Body, caps: PicgenCapabilities, model: string): Record<string, unknown> | null | undefined {
  if (!Object.hasOwn(body, 'optimize_prompt_options')) return undefined;
  const options = body.optimize_prompt_options;
  if (options === null) return null;
  if (!isPlainObject(options)) refuse('optimize_prompt_options', PROMPT_OPTIONS_RULE);
  const mode = field(options, 'mode');
  if (mode === undefined) return {};
  if (typeof mode !== 'string' || !(PROMPT_MODES as readonly string[]).includes(mode)) refuse('optimize_prompt_options.mode', PROMPT_MODE_RULE);
  if (mode === 'fast' && !caps.fastPrompt) refuse('optimize_prompt_options.mode', `fast is only available on 5.0 Pro and 4.0, not ${model} (${caps.label})`);
  return { mode };
}

function readTools(body: Body, caps: PicgenCapabilities, model: string): Record<string, unknown>[] | undefined {
  const tools = field(body, 'tools');
  if (tools === undefined) return undefined;
  if (!caps.tools) refuse('tools', `not supported by ${model} (${caps.label}); only 5.0 and 5.0 Lite take tools`);
  if (!Array.isArray(tools) || tools.length === 0 || tools.length > MAX_TOOLS)
    refuse('tools', `must be an array of 1 to ${MAX_TOOLS} objects, each with a non-empty string type`);
  // Tools are forwarded as given (their support depends on the upstream), so only their size is bounded.
  checkForwarded(tools, 'tools');
  return tools.map((tool: unknown, index) => {
    if (!isPlainObject(tool)) refuse(`tools.${index}`, 'must be an object with a non-empty string type');
    const type = tool.type;
    if (typeof type !== 'string' || type.trim() === '') refuse(`tools.${index}.type`, 'must be a non-empty string');
    return { ...tool };
  });
}

function readNumbers(body: Body, upstream: Record<string, unknown>): void {
  const seed = field(body, 'seed');
  if (seed !== undefined && (typeof seed !== 'number' || !Number.isSafeInteger(seed))) refuse('seed', 'must be an integer');
  const guidance = field(body, 'guidance_scale');
  if (guidance !== undefined && (typeof guidance !== 'number' || !Number.isFinite(guidance))) refuse('guidance_scale', 'must be a finite number');
  if (seed !== undefined) upstream.seed = seed;
  if (guidance !== undefined) upstream.guidance_scale = guidance;
}

function readLook(body: Body, caps: PicgenCapabilities, model: string, references: number, upstream: Record<string, unknown>): void {
  const outputFormat = readEnum(body, 'output_format', OUTPUT_FORMATS);
  if (outputFormat !== undefined && !caps.outputFormat) refuse('output_format', `not supported by ${model} (${caps.label}); only 5.0-series models take it`);
  const background = readEnum(body, 'background', BACKGROUNDS);
  if (background === 'transparent' && caps.layers) {
    if (references !== 1)
      refuse(
        'background',
        `transparent on ${model} (${caps.label}) needs exactly one reference image (got ${references}); it is unavailable for text-only generation`,
      );
    if (outputFormat === 'jpeg') refuse('background', 'transparent cannot be combined with output_format jpeg');
  }
  if (outputFormat !== undefined) upstream.output_format = outputFormat;
  if (background !== undefined) upstream.background = background;
}

/** Every field except prompt, image, size and layer_decomposition. */
export function readCommonFields(body: Body, caps: PicgenCapabilities, model: string, references: number): CommonFields {
  readOnlyOne(body, 'n');
  readOnlyOne(body, 'stream');
  if (Object.hasOwn(body, 'mask')) refuse('mask', MASK_REFUSAL);
  const upstream: Record<string, unknown> = {};
  const sequential = readSequential(body, caps, model, references);
  Object.assign(upstream, sequential.upstream);
  readNumbers(body, upstream);
  for (const key of ['watermark', 'optimize_prompt'] as const) {
    const value = readBoolean(body, key);
    if (value !== undefined) upstream[key] = value;
  }
  const promptOptions = readPromptOptions(body, caps, model);
  if (promptOptions !== undefined) upstream.optimize_prompt_options = promptOptions;
  readLook(body, caps, model, references, upstream);
  const tools = readTools(body, caps, model);
  if (tools !== undefined) upstream.tools = tools;
  // The upstream is asked for its default (URLs); the gateway adds Base64 itself (spec 4.7).
  const responseFormat = readEnum(body, 'response_format', RESPONSE_FORMATS) ?? 'url';
  return { upstream, outputs: sequential.outputs, responseFormat };
}
