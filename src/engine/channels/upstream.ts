/**
 * The port between the engine and a family's upstream protocol. Each channel family has one
 * adapter (src/families/<f>/upstream.ts) that maps our recorded request to its upstream and
 * the upstream's answers back to these shapes. Adapters know nothing of the engine's streams.
 */
import type { EventDataOf } from '../../domain/events.js';
import type { ChannelDoc } from '../../../projections/channels.js';

export type SubmittedTaskData = EventDataOf<'TaskSubmitted'>;

export interface UpstreamContext {
  channel: ChannelDoc;
  /** The channel's base URL resolved to an absolute URL. */
  baseUrl: string;
  /** The model name the upstream knows (after the channel's model mapping). */
  upstreamModel: string;
  task: SubmittedTaskData;
  /**
   * Aborts at the task's deadline (its family's maximum age): adapters pass it to every
   * upstream call. The engine stops waiting at the deadline whether or not they do.
   */
  signal?: AbortSignal | undefined;
  /**
   * The client reference of a submit (`submitReference`), sent as its `Idempotency-Key` header:
   * every submit of one task to one channel carries the same, so an upstream that honours the
   * header (this gateway does, on every family's submit route) answers a repeated submit with the
   * job it already made. Adapters pass it on each submit request; polls have none.
   */
  idempotencyKey?: string | undefined;
}

/**
 * `<task id>:<channel id>`: the task's own id, unique and stable across instances and restarts,
 * plus the channel, so two channels that reach one upstream with one key but another model
 * mapping (another body) never meet the upstream's "key reused with another body" refusal.
 * About 60 characters (the gateway takes 1 to 255).
 */
export function submitReference(taskId: string, channelId: string): string {
  return `${taskId}:${channelId}`;
}

/** A refused or failed upstream call; `retryable` failures move on to the next channel. */
export class UpstreamError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'UpstreamError';
  }
}

export interface UpstreamResult {
  kind: 'image' | 'video' | 'audio' | 'text';
  /** Where the upstream keeps the bytes (downloaded and re-hosted by the gateway). */
  url?: string;
  /**
   * The URL needs the channel's key (an authenticated content endpoint): it is sent with the
   * download only when the URL is on the channel's own origin, and not across redirects.
   */
  withChannelKey?: boolean;
  /** Bytes given inline. */
  b64?: string;
  text?: string;
  revisedPrompt?: string;
  contentType?: string;
  durationSeconds?: number;
}

export type UpstreamStatus =
  | { state: 'queued' | 'in_progress'; progress: number; snapshot?: Record<string, unknown> }
  | { state: 'succeeded'; results: UpstreamResult[]; usage: { units: number; tier?: string }; snapshot?: Record<string, unknown> }
  | { state: 'failed'; code: string; reason: string; snapshot?: Record<string, unknown> }
  /** The upstream no longer knows the task. */
  | { state: 'lost'; reason: string };

export interface UpstreamAdapter {
  /** Channel family this adapter speaks for. */
  readonly family: string;
  /** How results are delivered to clients: gateway URLs, or Base64 in the query view. */
  readonly delivery: (task: SubmittedTaskData) => 'url' | 'b64';
  readonly pollIntervalMs: number;
  /** A task older than this is failed with `timeout`. */
  readonly maxAgeSeconds: number;
  submit(ctx: UpstreamContext): Promise<{ upstreamTaskId: string }>;
  poll(ctx: UpstreamContext & { upstreamTaskId: string }): Promise<UpstreamStatus>;
}

export type UpstreamRegistry = ReadonlyMap<string, UpstreamAdapter>;

/** A channel base URL that is a path (`/_sim`) means "this gateway itself". */
export function resolveBaseUrl(baseUrl: string, selfUrl: string): string {
  return (baseUrl.startsWith('/') ? selfUrl + baseUrl : baseUrl).replace(/\/+$/, '');
}

export function upstreamModelOf(channel: ChannelDoc, model: string): string {
  return Object.hasOwn(channel.modelMapping, model) ? channel.modelMapping[model]! : model;
}

/** What a submit of `task` to `channel` is given, but its signal: the channel's resolved base URL, the mapped model, the client reference. */
export function submitContext(channel: ChannelDoc, selfUrl: string, task: SubmittedTaskData): UpstreamContext {
  const idempotencyKey = submitReference(task.taskId, channel.channelId);
  return { channel, baseUrl: resolveBaseUrl(channel.baseUrl, selfUrl), upstreamModel: upstreamModelOf(channel, task.model), task, idempotencyKey };
}
