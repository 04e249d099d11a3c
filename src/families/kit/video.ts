/**
 * What the four video families (vidgen, Vid-H3, clip, motion) share: the plan their request
 * rules produce, field readers the images toolkit does not have (seconds as integer or numeric
 * string, callback URLs, reference counts), one submit and one query path for their routes,
 * and the succeeded status their upstream adapters report (seconds and resolution delivered).
 */
import type { FastifyRequest } from 'fastify';
import type { EventDataOf } from '../domain/events.js';
import { submitIdempotently } from '../engine/idempotency.js';
import { submitTask } from '../engine/submit.js';
import type { UpstreamStatus } from '../engine/upstream.js';
import { assertModelAllowed, authenticate } from '../http/auth/bearer.js';
import type { GatewayDeps } from '../http/deps.js';
import { GatewayError } from '../http/errors.js';
import { metadataFor } from '../http/request-meta.js';
import { taskViewFor } from '../http/task-views.js';
import type { Projection } from '../../projections/projection.js';
import { type Body, checkLength, field, isHttpUrl, isPlainObject, MAX_PROMPT_CHARS, RuleRefusal, refuse } from './images/rules/shared.js';
import type { UrlFieldSpec } from './url-fields.js';
import { enforceUrlPolicyOn } from './url-policy.js';

export { type Body, checkForwarded, checkLength, field, isHttpUrl, isOneOf, isPlainObject, MAX_PROMPT_CHARS, readEnum, refuse } from './images/rules/shared.js';

/** What a video request becomes: reservation inputs (seconds × tier) and the upstream body. */
export interface VideoPlan {
  action: string;
  model: string;
  /** Seconds the reservation is quoted on. */
  units: number;
  /** Resolution (or clip mode) the reservation is quoted on. */
  tier: string;
  /** Separately priced options (vidgen 1.5: `audio`). */
  extras?: readonly string[];
  /** Sent to the upstream adapter as the task's recorded request. */
  upstream: Record<string, unknown>;
  /** `metadata.callback_url`: kept on the task for the gateway's own delivery, never sent upstream. */
  callbackUrl?: string;
}

export type VideoPlanResult = { ok: true; plan: VideoPlan } | { ok: false; param: string; message: string };

/** Runs rules that refuse by throwing (the images toolkit's style) and returns the first refusal. */
export function planned(rules: () => VideoPlan): VideoPlanResult {
  try {
    return { ok: true, plan: rules() };
  } catch (error) {
    if (error instanceof RuleRefusal) return { ok: false, param: error.param, message: error.message };
    throw error;
  }
}

export function readBody(body: unknown): Body {
  if (!isPlainObject(body)) refuse('body', 'must be a JSON object');
  return body;
}

/**
 * Whole seconds given as an integer or as a numeric string (`"5"`; multipart forms and the
 * common clients send strings). Decimals, signs and blanks are refused.
 */
export function readWholeSeconds(value: unknown, param: string, min: number, max: number): number | undefined {
  if (value === undefined || value === null) return undefined;
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isInteger(n) || n < min || n > max) refuse(param, `must be a whole number of seconds from ${min} to ${max} (an integer or a numeric string)`);
  return n;
}

export function readHttpUrl(value: unknown, param: string): string {
  if (typeof value !== 'string' || !isHttpUrl(value)) refuse(param, 'must be an http or https URL');
  return value;
}

/** An optional string of at most `max` characters (default: the prompt limit; the spec shows none). */
export function readOptionalString(body: Body, key: string, param = key, max = MAX_PROMPT_CHARS): string | undefined {
  const value = field(body, key);
  if (value === undefined) return undefined;
  if (typeof value !== 'string') refuse(param, 'must be a string');
  checkLength(value, param, max);
  return value;
}

export function readOptionalBoolean(body: Body, key: string, param = key): boolean | undefined {
  const value = field(body, key);
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') refuse(param, 'must be true or false');
  return value;
}

export function readOptionalInt(body: Body, key: string, min: number, max: number, param = key): number | undefined {
  const value = field(body, key);
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) refuse(param, `must be an integer from ${min} to ${max}`);
  return value;
}

/** `metadata.callback_url` (spec 6.2): an http/https URL; the gateway delivers the callback itself. */
export function readCallbackUrl(metadata: Body | undefined): string | undefined {
  const value = metadata ? field(metadata, 'callback_url') : undefined;
  return value === undefined ? undefined : readHttpUrl(value, 'metadata.callback_url');
}

/** An optional plain object field, e.g. `metadata`. */
export function readObject(body: Body, key: string, param = key): Body | undefined {
  const value = field(body, key);
  if (value === undefined) return undefined;
  if (!isPlainObject(value)) refuse(param, 'must be an object');
  return value;
}

/** One value from several fields that mean the same (e.g. the first frame); different values are refused. */
export function oneOf(param: string, what: string, values: ReadonlyArray<string | undefined>): string | undefined {
  const given = [...new Set(values.filter((v): v is string => v !== undefined))];
  if (given.length > 1) refuse(param, `the ${what} is given more than once with different values; give it once`);
  return given[0];
}

export type ReferenceCounts = Readonly<{ images: number; videos: number; audio: number }>;

/** Limits of spec 4.3 rule 2 and 8 (vidgen and Vid-H3): 9 images, 3 videos, 3 audio. */
export const REFERENCE_LIMITS: ReferenceCounts = { images: 9, videos: 3, audio: 3 };

/** Refuses more references of a kind than the spec allows (the audio-only rule is vidgen's own). */
export function checkReferenceCounts(param: string, counts: ReferenceCounts): void {
  if (counts.images > REFERENCE_LIMITS.images) refuse(param, `at most ${REFERENCE_LIMITS.images} images, got ${counts.images}`);
  if (counts.videos > REFERENCE_LIMITS.videos) refuse(param, `at most ${REFERENCE_LIMITS.videos} videos, got ${counts.videos}`);
  if (counts.audio > REFERENCE_LIMITS.audio) refuse(param, `at most ${REFERENCE_LIMITS.audio} audio references, got ${counts.audio}`);
}

// ---- routes --------------------------------------------------------------------------------

export interface VideoSubmitSpec {
  /** TaskSubmitted family the family's projection recognises. */
  family: string;
  /** Upstream protocol (channel family). */
  channelFamily: string;
  plan: (body: unknown) => VideoPlanResult;
  /** Every field of the body that names a URL (references and the callback), for the URL policy. */
  urlFields: readonly UrlFieldSpec[];
  /** Fields of the upstream body that take raw Base64 (stored aside when large; see SubmitRequest). */
  base64Fields?: readonly string[];
}

/**
 * The submit path of every video route: authenticate, validate, check the model and the URLs,
 * then reserve and open the task (idempotently with `Idempotency-Key`) — in that order, so a
 * refused request appends nothing.
 */
export async function submitVideo(deps: GatewayDeps, request: FastifyRequest, spec: VideoSubmitSpec): Promise<EventDataOf<'TaskSubmitted'>> {
  const caller = await authenticate(request, deps.tokens, deps.clock());
  const result = spec.plan(request.body);
  if (!result.ok) throw new GatewayError(400, 'invalid_request', result.message, result.param);
  const { plan } = result;
  assertModelAllowed(caller, plan.model, deps.catalog);
  await enforceUrlPolicyOn(deps, request.body, spec.urlFields);
  const header = request.headers['idempotency-key'];
  const idempotencyKey = Array.isArray(header) ? header[0] : header;
  const metadata = metadataFor(request, deps.clock());
  const outcome = await submitIdempotently(deps, { key: idempotencyKey, tokenId: caller.tokenId, body: request.body, metadata }, (ids) =>
    submitTask(deps, {
      family: spec.family,
      channelFamily: spec.channelFamily,
      action: plan.action,
      model: plan.model,
      caller,
      request: plan.upstream,
      ...(spec.base64Fields ? { base64Fields: spec.base64Fields } : {}),
      units: plan.units,
      tier: plan.tier,
      ...(plan.extras ? { extras: plan.extras } : {}),
      ...(plan.callbackUrl ? { callbackUrl: plan.callbackUrl } : {}),
      ...ids,
      metadata,
    }),
  );
  return outcome.task;
}

/** The caller's task view, or 404 `task_not_exist` (another account's task looks missing). */
export async function findVideoTask<D extends { accountId: string }>(deps: GatewayDeps, request: FastifyRequest, projection: Projection<D>): Promise<D> {
  const caller = await authenticate(request, deps.tokens, deps.clock());
  const { task_id: taskId } = request.params as { task_id: string };
  const doc = await taskViewFor(deps, projection, taskId, caller.accountId);
  if (!doc) throw new GatewayError(404, 'task_not_exist', `task_id: no task ${taskId}`, 'task_id');
  return doc;
}

// ---- upstream adapters -----------------------------------------------------------------------

/** Video generation takes minutes: poll gently, give up after two hours. */
export const VIDEO_POLL_INTERVAL_MS = 5_000;
export const VIDEO_MAX_AGE_SECONDS = 2 * 3600;

/** A finite non-negative number from a number or numeric string the upstream reported. */
export function reportedNumber(value: unknown): number | undefined {
  const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : Number.NaN;
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

/**
 * The succeeded status of a video task: one video and the usage settlement charges — the
 * seconds and tier the upstream reports delivering, else what was reserved (the settler keeps
 * the reserved tier when `tier` is absent).
 */
export function videoSucceeded(
  video: { url: string; withChannelKey?: boolean } | { b64: string },
  delivered: { seconds: number | undefined; tier: string | undefined },
  reservedSeconds: number,
  snapshot?: Record<string, unknown>,
): UpstreamStatus {
  const seconds = delivered.seconds ?? reservedSeconds;
  return {
    state: 'succeeded',
    results: [{ kind: 'video', contentType: 'video/mp4', durationSeconds: seconds, ...video }],
    usage: { units: seconds, ...(delivered.tier !== undefined ? { tier: delivered.tier } : {}) },
    ...(snapshot ? { snapshot } : {}),
  };
}

/** The tier name the upstream reported, matched case-insensitively against the family's tiers. */
export function knownTier(reported: unknown, tiers: readonly string[]): string | undefined {
  if (typeof reported !== 'string') return undefined;
  return tiers.find((t) => t.toLowerCase() === reported.trim().toLowerCase());
}
