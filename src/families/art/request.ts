/**
 * Request rules of the four `art` submit actions (spec 2.7, 4.14; paths and bodies decided in
 * docs/decisions/0030-art-submits-fetch-and-request-rules.md). Pure: the same body always gives the same answer; CHANGE's check of the
 * task it changes (finished, the caller's own) needs the store and is done by the route.
 *
 *   POST /art/submit/imagine   {prompt, base64Array?, notifyHook?, state?}        art_imagine
 *   POST /art/submit/describe  {base64, notifyHook?, state?}                       art_describe
 *   POST /art/submit/blend     {base64Array (2–5), dimensions?, notifyHook?, state?} art_blend
 *   POST /art/submit/change    {taskId, action, index?, notifyHook?, state?}       art_change
 *
 * Images are Base64 data URIs (`data:image/<format>;base64,…`). Unknown fields are ignored.
 */
import { type Body, field, isImageDataUri, isPlainObject, readCallbackUrl, readEnum, readInt, readString, readText, refuse } from '../kit/fields.js';
import type { UrlFieldSpec } from '../kit/url-fields.js';
import { planned, type PlanResult } from '../kit/plan.js';

export const ART_SUBMITS = ['imagine', 'describe', 'blend', 'change'] as const;
export type ArtSubmit = (typeof ART_SUBMITS)[number];
export const CHANGE_ACTIONS = ['UPSCALE', 'VARIATION', 'REROLL'] as const;
export type ChangeAction = (typeof CHANGE_ACTIONS)[number];
export type ArtAction = 'IMAGINE' | 'DESCRIBE' | 'BLEND' | ChangeAction;
export const DIMENSIONS = ['PORTRAIT', 'SQUARE', 'LANDSCAPE'] as const;

export const ART_PROMPT_MAX = 6000;
export const ART_STATE_MAX = 1024;
export const IMAGINE_MAX_IMAGES = 5;
export const BLEND_MIN_IMAGES = 2;
export const BLEND_MAX_IMAGES = 5;
export const GRID_SIZE = 4;
export const TASK_ID_MAX = 128;
/** A gateway task id as CHANGE takes it: letters, digits, `_` and `-`. */
export const TASK_ID_PATTERN = new RegExp(`^[\\w-]{1,${TASK_ID_MAX}}$`);

/** The only URL field (images are data URIs), for the URL policy. */
export const ART_URL_FIELDS: readonly UrlFieldSpec[] = [{ path: 'notifyHook', use: 'callback' }];

export const MODEL_OF: Readonly<Record<ArtSubmit, string>> = { imagine: 'art_imagine', describe: 'art_describe', blend: 'art_blend', change: 'art_change' };

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

export const DATA_URI_HINT = 'a data:image/<format>;base64,<data> URI';

function readImages(body: Body, key: string, min: number, max: number): string[] | undefined {
  const value = field(body, key);
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.length < min || value.length > max) refuse(key, `must be an array of ${min} to ${max} images, each ${DATA_URI_HINT}`);
  return value.map((item: unknown, index) => {
    if (typeof item !== 'string' || !isImageDataUri(item)) refuse(key, `item ${index} must be ${DATA_URI_HINT}`);
    return item;
  });
}

function common(body: Body): { callbackUrl?: string; state?: string } {
  const callbackUrl = readCallbackUrl(body, 'notifyHook');
  const state = readString(body, 'state', { minLength: 0, maxLength: ART_STATE_MAX });
  return { ...(callbackUrl !== undefined ? { callbackUrl } : {}), ...(state !== undefined ? { state } : {}) };
}

function imagine(body: Body): Pick<ArtPlan, 'action' | 'upstream'> {
  const prompt = readText(body, 'prompt', ART_PROMPT_MAX);
  if (prompt === undefined) refuse('prompt', 'required, what to imagine');
  const images = readImages(body, 'base64Array', 1, IMAGINE_MAX_IMAGES);
  return { action: 'IMAGINE', upstream: { prompt, ...(images ? { base64Array: images } : {}) } };
}

function describe(body: Body): Pick<ArtPlan, 'action' | 'upstream'> {
  const image = field(body, 'base64');
  if (image === undefined) refuse('base64', `required, the image to describe as ${DATA_URI_HINT}`);
  if (typeof image !== 'string' || !isImageDataUri(image)) refuse('base64', `must be ${DATA_URI_HINT}`);
  return { action: 'DESCRIBE', upstream: { base64: image } };
}

function blend(body: Body): Pick<ArtPlan, 'action' | 'upstream'> {
  const images = readImages(body, 'base64Array', BLEND_MIN_IMAGES, BLEND_MAX_IMAGES);
  if (images === undefined) refuse('base64Array', `required, ${BLEND_MIN_IMAGES} to ${BLEND_MAX_IMAGES} images to blend`);
  const dimensions = readEnum(body, 'dimensions', DIMENSIONS) ?? 'SQUARE';
  return { action: 'BLEND', upstream: { base64Array: images, dimensions } };
}

function change(body: Body): Pick<ArtPlan, 'action' | 'upstream' | 'parentTaskId'> {
  const taskId = field(body, 'taskId');
  if (taskId === undefined) refuse('taskId', 'required, the id of the finished task to change');
  if (typeof taskId !== 'string' || !TASK_ID_PATTERN.test(taskId)) refuse('taskId', `must be a task id (letters, digits, _ and -, at most ${TASK_ID_MAX})`);
  const action = readEnum(body, 'action', CHANGE_ACTIONS);
  if (action === undefined) refuse('action', `required, one of ${CHANGE_ACTIONS.join(', ')}`);
  const index = readInt(body, 'index', 1, GRID_SIZE);
  if (action === 'REROLL' && index !== undefined) refuse('index', 'not used by REROLL (it redoes the whole grid)');
  if (action !== 'REROLL' && index === undefined) refuse('index', `required for ${action}: which image of the grid, 1 to ${GRID_SIZE}`);
  return { action, parentTaskId: taskId, upstream: { taskId, action, ...(index !== undefined ? { index } : {}) } };
}

const RULES: Readonly<Record<ArtSubmit, (body: Body) => Pick<ArtPlan, 'action' | 'upstream' | 'parentTaskId'>>> = { imagine, describe, blend, change };

export function planArtRequest(submit: ArtSubmit, body: unknown): ArtPlanResult {
  return planned(() => {
    if (!isPlainObject(body)) refuse('body', 'must be a JSON object');
    const { action, upstream, parentTaskId } = RULES[submit](body);
    const { callbackUrl, state } = common(body);
    const plan: ArtPlan = {
      submit,
      action,
      model: MODEL_OF[submit],
      units: 1,
      upstream: { ...upstream, ...(state !== undefined ? { state } : {}) },
      ...(callbackUrl !== undefined ? { callbackUrl } : {}),
      ...(parentTaskId !== undefined ? { parentTaskId } : {}),
    };
    return plan;
  });
}
