/**
 * The capability table of the synchronous `picgen` models (spec 4.7, limits 8): size presets,
 * custom pixel-area range, sequential generation, layer decomposition, output format, tools,
 * fast prompt optimisation, and the reference limit of the edit endpoint (4.8).
 */
import type { picgenSyncModels } from './catalog.js';

export type PicgenSyncModel = (typeof picgenSyncModels)[number];

export interface PicgenCapabilities {
  /** Row name in the spec's table, for messages. */
  label: string;
  /** Size presets, canonical spelling (matched case-insensitively). */
  presets: readonly string[];
  minArea: number;
  maxArea: number;
  sequential: boolean;
  layers: boolean;
  /** `output_format` accepted (png, jpeg). */
  outputFormat: boolean;
  tools: boolean;
  /** `optimize_prompt_options.mode: fast` accepted. */
  fastPrompt: boolean;
  /** Reference images on `/v1/images/edits`. */
  maxReferences: number;
}

const FIVE_PRO_FLASH = {
  presets: ['1K', '1.5K', '2K'],
  minArea: 921_600,
  maxArea: 4_624_220,
  sequential: false,
  layers: true,
  outputFormat: true,
  tools: false,
  maxReferences: 10,
} as const;
const FIVE_LITE_BASE = {
  presets: ['2K', '3K', '4K'],
  minArea: 3_686_400,
  maxArea: 16_777_216,
  sequential: true,
  layers: false,
  outputFormat: true,
  tools: true,
  fastPrompt: false,
  maxReferences: 14,
} as const;

export const PICGEN_CAPABILITIES: Readonly<Record<PicgenSyncModel, PicgenCapabilities>> = {
  'vendor-picgen-5-0-pro-260628': { label: '5.0 Pro', ...FIVE_PRO_FLASH, fastPrompt: true },
  'vendor-picgen-5-0-flash-260915': { label: '5.0 Flash', ...FIVE_PRO_FLASH, fastPrompt: false },
  'vendor-picgen-5-0-lite-260128': { label: '5.0 Lite', ...FIVE_LITE_BASE },
  'vendor-picgen-5-0-260128': { label: '5.0', ...FIVE_LITE_BASE },
  'vendor-picgen-4-5-251128': { label: '4.5', ...FIVE_LITE_BASE, presets: ['2K', '4K'], outputFormat: false, tools: false },
  'vendor-picgen-4-0-250828': {
    label: '4.0',
    ...FIVE_LITE_BASE,
    presets: ['1K', '2K', '4K'],
    minArea: 921_600,
    outputFormat: false,
    tools: false,
    fastPrompt: true,
  },
};

/** Sizes a layer decomposition accepts (edit endpoint only). */
export const LAYER_SIZES = ['1K', '1.5K', '2K', 'auto'] as const;

/** Sequential generation: references plus estimated outputs, and `max_images`, at most this. */
export const SEQUENTIAL_MAX_TOTAL = 15;

export function capabilitiesOf(model: PicgenSyncModel): PicgenCapabilities {
  return PICGEN_CAPABILITIES[model];
}
