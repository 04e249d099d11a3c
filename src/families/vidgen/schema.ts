/**
 * The vidgen routes' declared contract (spec 4.3, 4.4, 2.3): the submit body, one branch per
 * model (the resolutions each offers), and the answers. A reference item's role and its URL
 * holder are those of its type. What counts items across the list (at most 9 images, 3 videos,
 * 3 audio; audio only with an image or a video; one first and one last frame, a last frame only
 * after a first) or ties the list to the model (frames, reference video) stays with the rules
 * (request.ts, content.ts): each is refused naming the whole list, after its items are checked.
 */
import { z } from 'zod';
import { isPlainObject, MAX_PROMPT_CHARS } from '../kit/fields.js';
import { bool, callbackUrl, HTTP_URL_DOC, httpUrl, int, jsonBody, NON_BLANK, object, oneOf, onlyKeys, WHITE_SPACE, wholeSeconds } from '../kit/schema.js';
import { vidgenModels } from './catalog.js';
import { VIDGEN_MODELS } from './models.js';

export const VIDGEN_MAX_SECONDS = 3600;
/** 3600 s at 24 frames per second, plus the first frame. */
export const VIDGEN_MAX_FRAMES = 86_401;
const SEED_MAX = 4_294_967_295;
const SERVICE_TIERS = ['default', 'flex'] as const;
const RATIO = /^(\d{1,2}:\d{1,2}|adaptive|keep_ratio)$/;
const RATIO_RULE = 'must be an aspect ratio such as 16:9, 9:16, 1:1, or adaptive';
const PROMPT_RULE = 'required, a non-empty string';
const CONTENT_ARRAY_RULE = 'must be an array of reference items';
const ITEM_RULE = 'must be an object {type, role, <type>: {url}}';
const ITEM_TYPE_RULE = 'must be image_url, video_url or audio_url';

export const METADATA_KEYS = [
  'resolution',
  'ratio',
  'frames',
  'seed',
  'generate_audio',
  'watermark',
  'camera_fixed',
  'draft',
  'callback_url',
  'service_tier',
  'content',
] as const;

export const ROLES_BY_TYPE = {
  image_url: ['reference_image', 'first_frame', 'last_frame'],
  video_url: ['reference_video'],
  audio_url: ['reference_audio'],
} as const;

const absent = (input: unknown) => input === undefined || input === null;

/** The family's own prompt reader: a missing, non-string or blank prompt reads alike. */
const prompt = z
  .string({ error: PROMPT_RULE })
  .regex(NON_BLANK, PROMPT_RULE)
  .max(MAX_PROMPT_CHARS, { error: (issue) => `must be at most ${MAX_PROMPT_CHARS} characters, got ${String(issue.input).length}` })
  .meta({ description: `the prompt, at most ${MAX_PROMPT_CHARS} characters` });

/** The roles an item of `type` takes. */
const role = (type: keyof typeof ROLES_BY_TYPE) => z.enum(ROLES_BY_TYPE[type], { error: `a ${type} item takes the role ${ROLES_BY_TYPE[type].join(', ')}` });

/** The `{url}` an item holds under its type's name. */
const holder = (type: keyof typeof ROLES_BY_TYPE) =>
  z.looseObject({ url: httpUrl() }, { error: 'must be an object holding url' }).meta({ description: `${type} items: {url}` });

const ContentItem = z.discriminatedUnion(
  'type',
  [
    z.looseObject({ type: z.literal('image_url'), role: role('image_url'), image_url: holder('image_url') }),
    z.looseObject({ type: z.literal('video_url'), role: role('video_url'), video_url: holder('video_url') }),
    z.looseObject({ type: z.literal('audio_url'), role: role('audio_url'), audio_url: holder('audio_url') }),
  ],
  {
    error: (issue) => (isPlainObject(issue.input) ? ITEM_TYPE_RULE : ITEM_RULE),
  },
);

/** An item of `type` taking `roles`, as JSON Schema. */
const itemDoc = (type: keyof typeof ROLES_BY_TYPE, roles: readonly string[]) => ({
  type: 'object',
  required: ['type', 'role', type],
  properties: {
    type: { type: 'string', enum: [type] },
    role: { type: 'string', enum: roles },
    [type]: { type: 'object', required: ['url'], properties: { url: HTTP_URL_DOC } },
  },
});

/**
 * The items a model takes, for the document (content.ts refuses the others in its own words, after
 * every item is checked as ContentItem): frames only where it has them, reference video on 2.x.
 */
function contentItemsOf(model: keyof typeof VIDGEN_MODELS) {
  const caps = VIDGEN_MODELS[model];
  return {
    oneOf: [
      itemDoc('image_url', caps.frames ? ROLES_BY_TYPE.image_url : ['reference_image']),
      ...(caps.referenceVideo ? [itemDoc('video_url', ROLES_BY_TYPE.video_url)] : []),
      itemDoc('audio_url', ROLES_BY_TYPE.audio_url),
    ],
  };
}

/** An item with `role` (or of `type`), and a list holding one: OpenAPI 3.0 has no `contains`, so `not` all items lack it. */
const withRole = (role: string) => ({ type: 'object', required: ['role'], properties: { role: { type: 'string', enum: [role] } } });
const ofType = (type: string) => ({ type: 'object', required: ['type'], properties: { type: { type: 'string', enum: [type] } } });
const holds = (item: object) => ({ not: { items: { not: item } } });

/**
 * What content.ts checks across the list that a schema can say: a last frame only with a first,
 * audio only with an image or a video. (The counts, at most 9 images, 3 videos, 3 audio and one
 * frame of each kind, need `maxContains`, which OpenAPI 3.0 does not have.)
 */
const CONTENT_RULES = [
  { anyOf: [{ items: { not: withRole('last_frame') } }, holds(withRole('first_frame'))] },
  { anyOf: [{ items: { not: ofType('audio_url') } }, holds(ofType('image_url')), holds(ofType('video_url'))] },
];

/** A resolution the model offers, in any case: `480p`, ` 720P `. */
function resolution(model: keyof typeof VIDGEN_MODELS) {
  const tiers: readonly string[] = VIDGEN_MODELS[model].tiers;
  const message = (input: unknown) => `${model} offers ${tiers.join(', ')}; ${JSON.stringify(input)} is not available`;
  return z
    .string({ error: (issue) => message(issue.input) })
    .refine((text) => tiers.includes(text.trim().toLowerCase()), { error: (issue) => message(issue.input) })
    .nullish()
    .meta({
      pattern: `^[${WHITE_SPACE}]*(?:${tiers.map((t) => t.replace(/[a-z]/g, (c) => `[${c}${c.toUpperCase()}]`)).join('|')})[${WHITE_SPACE}]*$`,
      description: `one of ${tiers.join(', ')} (any case); default: the highest up to 1080p`,
    });
}

const metadata = (model: keyof typeof VIDGEN_MODELS) =>
  onlyKeys(
    'metadata',
    METADATA_KEYS,
    object({
      resolution: resolution(model),
      ratio: z.string({ error: RATIO_RULE }).regex(RATIO, RATIO_RULE).nullish().meta({ description: 'e.g. 16:9, 9:16, 1:1, adaptive or keep_ratio' }),
      frames: int(1, VIDGEN_MAX_FRAMES).meta({ description: '24 per second plus the first frame; reserved when longer than seconds' }),
      seed: int(-1, SEED_MAX),
      generate_audio: bool().meta({ description: 'the 1.5 model: default true, billed as the audio extra' }),
      watermark: bool(),
      camera_fixed: bool(),
      draft: bool(),
      service_tier: oneOf(SERVICE_TIERS),
      content: z
        .array(ContentItem, { error: CONTENT_ARRAY_RULE })
        .nullish()
        .meta({
          items: contentItemsOf(model),
          allOf: CONTENT_RULES,
          description: 'reference media: at most 9 images, 3 videos and 3 audio, audio only with an image or a video',
        }),
      callback_url: callbackUrl(),
    }).meta({ additionalProperties: false, description: `forwarded upstream but for callback_url; takes only ${METADATA_KEYS.join(', ')}` }),
  );

const bodyOf = <M extends keyof typeof VIDGEN_MODELS>(model: M) =>
  jsonBody({
    model: z.literal(model),
    prompt,
    seconds: wholeSeconds(0, VIDGEN_MAX_SECONDS).meta({ description: '0 or absent: the upstream default of 5' }),
    metadata: metadata(model),
  });

const [first, ...rest] = vidgenModels.map(bodyOf);

/** The submit body: one branch per model; an unknown model is refused naming them all. */
export const VidgenBody = z.discriminatedUnion('model', [first!, ...rest], {
  error: (issue) => {
    if (!isPlainObject(issue.input)) return 'must be a JSON object';
    return absent(issue.input.model) ? 'required, one of the vidgen models' : `must be one of ${vidgenModels.join(', ')}`;
  },
});

export type VidgenRequest = z.output<typeof VidgenBody>;
export type VidgenContentItem = NonNullable<NonNullable<VidgenRequest['metadata']>['content']>[number];

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

export type VidgenEnvelope = z.infer<typeof VidgenTaskAnswer>;
export type VidgenSubmitBody = z.infer<typeof VidgenSubmitAnswer>;
