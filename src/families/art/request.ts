/**
 * Request rules of the four `art` submit actions (spec 2.7, 4.14; paths and bodies decided in
 * docs/decisions/0030-art-submits-fetch-and-request-rules.md), over the body the route's schema
 * parsed (schema.ts: every field is checked there): the upstream body, the defaults, the
 * callback. Pure: the same body always gives the same answer; CHANGE's check of the task it
 * changes (finished, the caller's own) needs the store and is done by the route.
 *
 *   POST /art/submit/imagine   {prompt, base64Array?, notifyHook?, state?}        art_imagine
 *   POST /art/submit/describe  {base64, notifyHook?, state?}                       art_describe
 *   POST /art/submit/blend     {base64Array (2–5), dimensions?, notifyHook?, state?} art_blend
 *   POST /art/submit/change    {taskId, action, index?, notifyHook?, state?}       art_change
 *
 * Images are Base64 data URIs (`data:image/<format>;base64,…`). Unknown fields are ignored.
 */
import type { UrlFieldSpec } from '../kit/url-fields.js';
import { planned, type PlanResult } from '../kit/plan.js';
import { parsedBody } from '../kit/schema.js';
import { ART_BODIES, type ArtBody, type ChangeAction } from './schema.js';

export const ART_SUBMITS = ['imagine', 'describe', 'blend', 'change'] as const;
export type ArtSubmit = (typeof ART_SUBMITS)[number];
export type ArtAction = 'IMAGINE' | 'DESCRIBE' | 'BLEND' | ChangeAction;

/** The only URL field (images are data URIs), for the URL policy. */
export const ART_URL_FIELDS: readonly UrlFieldSpec[] = [{ path: 'notifyHook', use: 'callback' }];

const MODEL_OF: Readonly<Record<ArtSubmit, string>> = { imagine: 'art_imagine', describe: 'art_describe', blend: 'art_blend', change: 'art_change' };

export interface ArtPlan {
  submit: ArtSubmit;
  /** The record's `action`: IMAGINE, DESCRIBE, BLEND, or the CHANGE action. */
  action: ArtAction;
  model: string;
  units: 1;
  /** The upstream body (CHANGE: the gateway id of the task changed, resolved by the route). */
  upstream: Record<string, unknown>;
  callbackUrl?: string;
  /** CHANGE only: the task it changes. */
  parentTaskId?: string;
}

export type ArtPlanResult = PlanResult<ArtPlan>;

type Decided = Pick<ArtPlan, 'action' | 'upstream' | 'parentTaskId'>;

const RULES: { [K in ArtSubmit]: (body: ArtBody<K>) => Decided } = {
  imagine: ({ prompt, base64Array }) => ({ action: 'IMAGINE', upstream: { prompt, ...(base64Array ? { base64Array } : {}) } }),
  describe: ({ base64 }) => ({ action: 'DESCRIBE', upstream: { base64 } }),
  blend: ({ base64Array, dimensions }) => ({ action: 'BLEND', upstream: { base64Array, dimensions: dimensions ?? 'SQUARE' } }),
  change: ({ taskId, action, index }) => ({
    action,
    parentTaskId: taskId,
    upstream: { taskId, action, ...(index !== undefined && index !== null ? { index } : {}) },
  }),
};

function plan<K extends ArtSubmit>(submit: K, body: ArtBody<K>): ArtPlan {
  const rules: (body: ArtBody<K>) => Decided = RULES[submit];
  const { action, upstream, parentTaskId } = rules(body);
  const callbackUrl = body.notifyHook ?? undefined;
  const state = body.state ?? undefined;
  return {
    submit,
    action,
    model: MODEL_OF[submit],
    units: 1,
    upstream: { ...upstream, ...(state !== undefined ? { state } : {}) },
    ...(callbackUrl !== undefined ? { callbackUrl } : {}),
    ...(parentTaskId !== undefined ? { parentTaskId } : {}),
  };
}

/** The plan of a body the route's schema parsed (the route's handler holds it). */
export const planArt = <K extends ArtSubmit>(submit: K, body: ArtBody<K>): ArtPlanResult => planned(() => plan(submit, body));

/** The plan of a raw body: the schema's first refusal, or the plan. */
export function planArtRequest(submit: ArtSubmit, body: unknown): ArtPlanResult {
  return planned(() => plan(submit, parsedBody(ART_BODIES[submit], body)));
}
