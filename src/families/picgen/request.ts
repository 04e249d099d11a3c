/**
 * The plan of the synchronous picgen endpoints, `POST /v1/images/generations` (spec 4.7) and
 * `POST /v1/images/edits` (4.8, after multipart is turned into the same body), over a body their
 * schema parsed (schema.ts): what ties fields together (fields.ts), what is sent upstream, what
 * is recorded, what is reserved at which size tier. Pure: a body in, a plan or the first refusal
 * `{param, message}` out. The URL policy on reference URLs is the route's.
 */
import { recordedCopy } from '../kit/fields.js';
import { planned, type PlanResult } from '../kit/plan.js';
import { given, parsedBody } from '../kit/schema.js';
import type { SyncPlan } from '../kit/sync-call.js';
import { capabilitiesOf, SEQUENTIAL_MAX_TOTAL, type PicgenSyncModel } from './capabilities.js';
import { commonOf } from './fields.js';
import { EditBody, GenerationBody, type PicgenEditRequest, type PicgenGenerationRequest } from './schema.js';
import { sizeOf } from './size.js';

export interface PicgenPlan extends SyncPlan {
  model: PicgenSyncModel;
  action: 'generate' | 'edit' | 'layers';
  /** Size preset the price is looked up for (estimate when size is omitted). */
  tier: string;
  /** Sent upstream: known fields only. */
  upstream: Record<string, unknown>;
  responseFormat: 'url' | 'b64_json';
}

export type PicgenPlanResult = PlanResult<PicgenPlan>;

function finish(draft: Omit<PicgenPlan, 'recorded'>): PicgenPlan {
  return { ...draft, recorded: recordedCopy(draft.upstream) };
}

function generation(body: PicgenGenerationRequest): PicgenPlan {
  const { model, prompt } = body;
  const caps = capabilitiesOf(model);
  const size = sizeOf(body.size, caps, 'generate');
  const common = commonOf(body, caps, model, 0);
  const upstream: Record<string, unknown> = { model, prompt, ...(size.upstream !== undefined ? { size: size.upstream } : {}), ...common.upstream };
  return finish({ model, action: 'generate', units: common.outputs, tier: size.tier, upstream, responseFormat: common.responseFormat });
}

function edit(body: PicgenEditRequest): PicgenPlan {
  const { model } = body;
  const caps = capabilitiesOf(model);
  const layers = body.layer_decomposition === true;
  const references = Array.isArray(body.image) ? body.image.length : 1;
  const size = sizeOf(body.size, caps, layers ? 'layers' : 'edit');
  const common = commonOf(body, caps, model, references);
  const upstream: Record<string, unknown> = {
    model,
    ...(given(body.prompt) ? { prompt: body.prompt } : {}),
    image: body.image,
    ...(size.upstream !== undefined ? { size: size.upstream } : {}),
    ...(layers ? { layer_decomposition: true } : {}),
    ...common.upstream,
  };
  return finish({
    model,
    action: layers ? 'layers' : 'edit',
    // The upstream decides how many layers; settlement never charges more images than the
    // reservation records, so a decomposition reserves the most it may return (like sequential
    // generation without max_images: 15 minus the one reference) and settles on those returned.
    units: layers ? SEQUENTIAL_MAX_TOTAL - references : common.outputs,
    tier: size.tier,
    upstream,
    responseFormat: common.responseFormat,
  });
}

/** The plan of a raw generation body: its schema, then the plan. */
export const planPicgenGeneration = (raw: unknown): PicgenPlanResult => planned(() => generation(parsedBody(GenerationBody, raw)));
/** The plan of a raw edit body (JSON or the decoded form): its schema, then the plan. */
export const planPicgenEdit = (raw: unknown): PicgenPlanResult => planned(() => edit(parsedBody(EditBody, raw)));
