/**
 * The plan of the synchronous std-image / pro-image endpoints, chat-style (spec 4.5) and
 * images-style (4.6), over a body their schema parsed (schema.ts): what counts across the
 * messages (messages.ts), the default answer form of the model, and the upstream body. The
 * options `n`, `size`, `quality`, `background`, `output_format`, `moderation`, `user` take the
 * values of 4.5 (n defaults to 1). Pure; unknown fields are dropped, not forwarded.
 */
import { recordedCopy } from '../kit/fields.js';
import { planned, type PlanResult } from '../kit/plan.js';
import { given, parsedBody } from '../kit/schema.js';
import type { SyncPlan } from '../kit/sync-call.js';
import { planMessages } from './messages.js';
import { ChatBody, type ChatRequest, type ImageOptions, ImagesBody, type ImagesRequest, type SyncImageModel } from './schema.js';

const OPTION_KEYS = ['size', 'quality', 'background', 'output_format', 'moderation', 'user'] as const;

/** What the stream events echo back (spec 6.1 / the openai client's event fields). */
export interface ImageEcho {
  size: string;
  quality: string;
  background: string;
  output_format: string;
}

export interface SyncImagePlan extends SyncPlan {
  model: SyncImageModel;
  action: 'chat/generate' | 'chat/edit' | 'images/generate';
  stream: boolean;
  upstream: Record<string, unknown>;
  /** http(s) references, for the outbound guard. */
  references: Array<{ param: string; url: string }>;
  /** images-style: how `data` items are given. */
  responseFormat: 'url' | 'b64_json';
  echo: ImageEcho;
}

export type SyncImagePlanResult = PlanResult<SyncImagePlan>;

/** The 4.5 options sent upstream: `n` (default 1), then each other option given. */
function optionsOf(body: ImageOptions): { n: number; options: Record<string, unknown> } {
  const n = body.n ?? 1;
  const options: Record<string, unknown> = { n };
  for (const key of OPTION_KEYS) if (given(body[key])) options[key] = body[key];
  return { n, options };
}

function echoOf(body: ImageOptions): ImageEcho {
  return { size: body.size ?? 'auto', quality: body.quality ?? 'auto', background: body.background ?? 'auto', output_format: body.output_format ?? 'png' };
}

function chat(body: ChatRequest): SyncImagePlan {
  const { model } = body;
  const { messages, images } = planMessages(body.messages);
  const { n, options } = optionsOf(body);
  const upstream: Record<string, unknown> = { model, messages, ...options };
  const references = images.filter((i) => !i.url.startsWith('data:'));
  const action = images.length > 0 ? 'chat/edit' : 'chat/generate';
  return {
    model,
    action,
    units: n,
    stream: body.stream === true,
    upstream,
    recorded: recordedCopy(upstream),
    references,
    responseFormat: 'url',
    echo: echoOf(body),
  };
}

function images(body: ImagesRequest): SyncImagePlan {
  const { model, prompt } = body;
  const { n, options } = optionsOf(body);
  const upstream: Record<string, unknown> = { model, prompt, ...options, ...(given(body.style) ? { style: body.style } : {}) };
  return {
    model,
    action: 'images/generate',
    units: n,
    stream: body.stream === true,
    upstream,
    recorded: recordedCopy(upstream),
    references: [],
    responseFormat: body.response_format ?? (model === 'pro-image' ? 'b64_json' : 'url'),
    echo: echoOf(body),
  };
}

/** The plan of a raw chat body: its schema, then the plan. */
export const planChatRequest = (raw: unknown): SyncImagePlanResult => planned(() => chat(parsedBody(ChatBody, raw)));
/** The plan of a raw images body: its schema, then the plan. */
export const planImagesRequest = (raw: unknown): SyncImagePlanResult => planned(() => images(parsedBody(ImagesBody, raw)));
