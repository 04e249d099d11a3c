/**
 * Step 3 of docs/adding-a-family.md, `request.ts`: the plan of a body the route's schema parsed
 * (schema.ts). Only what the schema cannot say alone stays here, each refusal naming the field
 * to change (`refuse`, kit/fields.ts): toy-sketch-hd draws at most 2 sketches. Pure: no I/O, no
 * clock. The reservation is sketches × the model's price per sketch.
 */
import type { TaskPlan } from '../../../src/families/kit/submit.js';
import type { UrlFieldSpec } from '../../../src/families/kit/url-fields.js';
import { refuse } from '../../../src/families/kit/fields.js';
import { planned, type PlanResult } from '../../../src/families/kit/plan.js';
import { given, parsedBody } from '../../../src/families/kit/schema.js';
import { TOY_DEFAULTS, ToySubmitBody } from './schema.js';

export const TOY_HD_MAX_SKETCHES = 2;

/** Every field naming a URL, for the URL policy: the completion callback. */
export const TOY_URL_FIELDS: readonly UrlFieldSpec[] = [{ path: 'callback_url', use: 'callback' }];

function plan(body: ToySubmitBody): TaskPlan {
  const n = body.n ?? TOY_DEFAULTS.n;
  if (body.model === 'toy-sketch-hd' && n > TOY_HD_MAX_SKETCHES) refuse('n', `toy-sketch-hd draws at most ${TOY_HD_MAX_SKETCHES} sketches, got ${n}`);
  return {
    action: 'draw',
    model: body.model,
    units: n,
    upstream: { model: body.model, prompt: body.prompt, n, style: body.style ?? TOY_DEFAULTS.style },
    ...(given(body.callback_url) ? { callbackUrl: body.callback_url } : {}),
  };
}

/** The plan of a body the route's schema parsed (the route's handler holds it). */
export const planToy = (body: ToySubmitBody): PlanResult<TaskPlan> => planned(() => plan(body));

/** The plan of a raw body (unit tests): the schema's first refusal, or the plan. */
export const planToyRequest = (raw: unknown): PlanResult<TaskPlan> => planned(() => plan(parsedBody(ToySubmitBody, raw)));
