/**
 * The vidgen routes' declared contract (spec 4.3, 4.4, 2.3): the submit body as the rules read it
 * (request.ts, content.ts: same fields, same words, in their order) and the answers. What depends
 * on the model (`metadata.resolution`, which reference roles it takes) or on other items (counts,
 * frames) stays with the rules, as do the role and URL of a content item, which its type decides.
 */
import { z } from 'zod';
import { MAX_PROMPT_CHARS } from '../kit/fields.js';
import { bool, callbackUrl, int, jsonBody, object, oneOf, onlyKeys, requiredOneOf, wholeSeconds } from '../kit/schema.js';
import { vidgenModels } from './catalog.js';
import { CONTENT_ARRAY_RULE, ITEM_RULE, ITEM_TYPE_RULE, ROLES_BY_TYPE } from './content.js';
import { VIDGEN_TIERS } from './models.js';
import { METADATA_KEYS, RATIO, RATIO_RULE, SEED_MAX, SERVICE_TIERS, VIDGEN_MAX_FRAMES, VIDGEN_MAX_SECONDS } from './request.js';

const PROMPT_RULE = 'required, a non-empty string';

/** The family's own prompt reader: a missing, non-string or blank prompt reads alike. */
const prompt = z
  .string({ error: PROMPT_RULE })
  .refine((text) => text.trim() !== '', PROMPT_RULE)
  .superRefine((text, ctx) => {
    if (text.length > MAX_PROMPT_CHARS) ctx.addIssue({ code: 'custom', message: `must be at most ${MAX_PROMPT_CHARS} characters, got ${text.length}` });
  })
  .meta({ description: `the prompt, at most ${MAX_PROMPT_CHARS} characters` });

const itemTypes = Object.keys(ROLES_BY_TYPE) as Array<keyof typeof ROLES_BY_TYPE>;
const holder = (type: string) =>
  z
    .unknown()
    .optional()
    .meta({ type: 'object', properties: { url: { type: 'string', format: 'uri' } }, description: `${type} items: {url}` });

/** One reference item: its type is checked here; its role and URL, which the type decides, by the rules (content.ts). */
const contentItem = z
  .looseObject(
    {
      type: z.enum(itemTypes, { error: ITEM_TYPE_RULE }),
      role: z
        .unknown()
        .optional()
        .meta({
          type: 'string',
          enum: Object.values(ROLES_BY_TYPE).flat(),
          description: Object.entries(ROLES_BY_TYPE)
            .map(([type, roles]) => `${type}: ${roles.join(' / ')}`)
            .join('; '),
        }),
      ...Object.fromEntries(itemTypes.map((type) => [type, holder(type)])),
    },
    { error: ITEM_RULE },
  )
  // The role is required too: the rules refuse an item without one (its type names the roles it takes).
  .meta({ description: '{type, role, <type>: {url}}', required: ['type', 'role'] });

const Metadata = onlyKeys(
  'metadata',
  METADATA_KEYS,
  object({
    resolution: z
      .unknown()
      .optional()
      .meta({ type: 'string', description: `one of ${VIDGEN_TIERS.join(', ')} the model offers; default: its highest up to 1080p` }),
    ratio: z.string({ error: RATIO_RULE }).regex(RATIO, RATIO_RULE).nullish().meta({ description: 'e.g. 16:9, 9:16, 1:1, adaptive or keep_ratio' }),
    frames: int(1, VIDGEN_MAX_FRAMES).meta({ description: '24 per second plus the first frame; reserved when longer than seconds' }),
    seed: int(-1, SEED_MAX),
    generate_audio: bool().meta({ description: 'the 1.5 model: default true, billed as the audio extra' }),
    watermark: bool(),
    camera_fixed: bool(),
    draft: bool(),
    service_tier: oneOf(SERVICE_TIERS),
    content: z
      .array(contentItem, { error: CONTENT_ARRAY_RULE })
      .nullish()
      .meta({ description: 'reference media: at most 9 images, 3 videos and 3 audio, audio only with an image or a video' }),
    callback_url: callbackUrl(),
  }).meta({ description: `forwarded upstream but for callback_url; takes only ${METADATA_KEYS.join(', ')}` }),
);

export const VidgenBody = jsonBody({
  model: requiredOneOf(vidgenModels, 'required, one of the vidgen models'),
  prompt,
  seconds: wholeSeconds(0, VIDGEN_MAX_SECONDS).meta({ description: '0 or absent: the upstream default of 5' }),
  metadata: Metadata,
});

export const VidgenSubmitAnswer = z.object({
  id: z.string().meta({ description: 'the task id' }),
  task_id: z.string(),
  object: z.literal('video'),
  model: z.string(),
  status: z.literal('queued'),
  progress: z.number(),
  created_at: z.number().meta({ description: 'Unix seconds' }),
});

export const VidgenTaskAnswer = z.object({
  code: z.literal('success'),
  message: z.string(),
  data: z.object({
    id: z.int().meta({ description: 'the position of the submit: unique and increasing' }),
    task_id: z.string(),
    platform: z.string(),
    status: z.enum(['NOT_START', 'IN_PROGRESS', 'SUCCESS', 'FAILURE']),
    progress: z.string().meta({ description: 'e.g. 40%' }),
    fail_reason: z.string(),
    result_url: z.string().meta({ description: "the gateway's signed URL of the video once SUCCESS; emptied when it expires" }),
    created_at: z.number(),
    updated_at: z.number(),
    submit_time: z.number().meta({ description: 'Unix seconds; 0 until the moment happened' }),
    start_time: z.number(),
    finish_time: z.number(),
    properties: z
      .object({
        origin_model_name: z.string(),
        resolution: z.string(),
        seconds: z.number(),
        reserved_resolution: z.string(),
        reserved_seconds: z.number(),
      })
      .meta({ description: 'resolution and seconds: asked for until SUCCESS, then delivered (and charged); reserved_*: what was reserved' }),
    data: z.looseObject({}).meta({ description: "the upstream's own task result" }),
  }),
});
