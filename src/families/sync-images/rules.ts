/**
 * Request rules of the synchronous std-image / pro-image endpoints: chat-style (spec 4.5) and
 * images-style (4.6). The options `n`, `size`, `quality`, `background`, `output_format`,
 * `moderation`, `user` take the values of 4.5, read by the pro-image rules of the async route
 * (one implementation). Pure; unknown fields are dropped, not forwarded.
 */
import { type Body, field, isPlainObject, readEnum, readPrompt, readString, redactDataUris, refuse } from '../kit/fields.js';
import { proImageRules } from '../kit/pro-image-rules.js';
import { readMessages } from './messages.js';
import { planned, type PlanResult } from '../kit/plan.js';

export const SYNC_IMAGE_MODELS = ['std-image', 'pro-image'] as const;
export type SyncImageModel = (typeof SYNC_IMAGE_MODELS)[number];
export const STYLE_MAX = 256;
export const RESPONSE_FORMATS = ['url', 'b64_json'] as const;
/** Why `image` or `images` (even null) is refused on the images-style route. */
export const REFERENCES_NOT_TAKEN = 'not taken by /v1/images/generations; for image-to-image send an image_url part to /v1/chat/completions';
/** Why a model is refused: absent (or null), or not one of SYNC_IMAGE_MODELS. */
export const MODEL_REQUIRED = 'required: std-image or pro-image';
export const MODEL_UNKNOWN = 'must be std-image or pro-image';

const OPTION_KEYS = ['n', 'size', 'quality', 'background', 'output_format', 'moderation', 'user'] as const;

/** What the stream events echo back (spec 6.1 / the openai client's event fields). */
export interface ImageEcho {
  size: string;
  quality: string;
  background: string;
  output_format: string;
}

export interface SyncImagePlan {
  model: SyncImageModel;
  action: 'chat/generate' | 'chat/edit' | 'images/generate';
  units: number;
  stream: boolean;
  upstream: Record<string, unknown>;
  recorded: Record<string, unknown>;
  /** http(s) references, for the outbound guard. */
  references: Array<{ param: string; url: string }>;
  /** images-style: how `data` items are given. */
  responseFormat: 'url' | 'b64_json';
  echo: ImageEcho;
}

export type SyncImagePlanResult = PlanResult<SyncImagePlan>;

export function isSyncImageModel(model: unknown): model is SyncImageModel {
  return typeof model === 'string' && (SYNC_IMAGE_MODELS as readonly string[]).includes(model);
}

function readModel(body: Body): SyncImageModel {
  const model = field(body, 'model');
  if (model === undefined) refuse('model', MODEL_REQUIRED);
  if (!isSyncImageModel(model)) refuse('model', MODEL_UNKNOWN);
  return model;
}

function readStream(body: Body): boolean {
  const stream = field(body, 'stream');
  if (stream !== undefined && typeof stream !== 'boolean') refuse('stream', 'must be true or false');
  return stream === true;
}

/** The 4.5 options, as the pro-image rules read and normalise them (n defaults to 1). */
function readOptions(body: Body, model: string, prompt: string): { n: number; options: Record<string, unknown> } {
  const picked = Object.fromEntries(OPTION_KEYS.filter((k) => Object.hasOwn(body, k)).map((k) => [k, body[k]]));
  const { upstream } = proImageRules(picked, model, prompt);
  const { model: _model, prompt: _prompt, ...options } = upstream;
  const n = typeof options.n === 'number' ? options.n : 1;
  return { n, options };
}

function echoOf(options: Record<string, unknown>): ImageEcho {
  const text = (key: string, fallback: string): string => (typeof options[key] === 'string' ? options[key] : fallback);
  return { size: text('size', 'auto'), quality: text('quality', 'auto'), background: text('background', 'auto'), output_format: text('output_format', 'png') };
}

function recordedOf(upstream: Record<string, unknown>): Record<string, unknown> {
  const recorded = redactDataUris(upstream);
  return isPlainObject(recorded) ? recorded : {};
}

function chat(body: unknown): SyncImagePlan {
  if (!isPlainObject(body)) refuse('body', 'must be a JSON object');
  const model = readModel(body);
  const { messages, prompt, images } = readMessages(body);
  const stream = readStream(body);
  const { n, options } = readOptions(body, model, prompt);
  const upstream: Record<string, unknown> = { model, messages, ...options };
  const references = images.filter((i) => !i.url.startsWith('data:'));
  const action = images.length > 0 ? 'chat/edit' : 'chat/generate';
  return { model, action, units: n, stream, upstream, recorded: recordedOf(upstream), references, responseFormat: 'url', echo: echoOf(options) };
}

function images(body: unknown): SyncImagePlan {
  if (!isPlainObject(body)) refuse('body', 'must be a JSON object');
  const model = readModel(body);
  const prompt = readPrompt(body);
  for (const key of ['image', 'images']) {
    if (Object.hasOwn(body, key)) refuse(key, REFERENCES_NOT_TAKEN);
  }
  const stream = readStream(body);
  const style = readString(body, 'style', { minLength: 0, maxLength: STYLE_MAX });
  const format = readEnum(body, 'response_format', RESPONSE_FORMATS);
  const { n, options } = readOptions(body, model, prompt);
  const upstream: Record<string, unknown> = { model, prompt, ...options, ...(style !== undefined ? { style } : {}) };
  const responseFormat = format ?? (model === 'pro-image' ? 'b64_json' : 'url');
  return {
    model,
    action: 'images/generate',
    units: n,
    stream,
    upstream,
    recorded: recordedOf(upstream),
    references: [],
    responseFormat,
    echo: echoOf(options),
  };
}

const run = (plan: (body: unknown) => SyncImagePlan, body: unknown): SyncImagePlanResult => planned(() => plan(body));

export const planChatRequest = (body: unknown): SyncImagePlanResult => run(chat, body);
export const planImagesRequest = (body: unknown): SyncImagePlanResult => run(images, body);
