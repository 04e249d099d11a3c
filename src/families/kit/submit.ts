/**
 * The one async submit pipeline of every family: for the caller (authenticated by the route's
 * `config.auth`, src/http/route-config.ts), plan (the family's rules), check the model against
 * the key, apply the URL policy, then reserve and open the task — idempotently with
 * `Idempotency-Key` — in that order, so a refused request appends nothing.
 * A family passes only what is its own: its rules, its URL fields, and where it differs.
 */
import type { FastifyRequest } from 'fastify';
import type { EventDataOf } from '../../domain/events.js';
import type { Caller } from '../../engine/accounts/caller.js';
import { submitIdempotently } from '../../engine/tasks/idempotency.js';
import { submitTask } from '../../engine/tasks/submit.js';
import { assertModelAllowed } from '../../http/auth/bearer.js';
import type { GatewayDeps } from '../../http/deps.js';
import { metadataFor } from '../../http/request-meta.js';
import { acceptedPlan, type PlanResult } from './plan.js';
import type { UrlFieldSpec } from './url-fields.js';
import { enforceUrlPolicyOn } from './url-policy.js';

/** What every family's rules decide for an async task. */
export interface TaskPlan {
  action: string;
  model: string;
  /** What the reservation is quoted on (images, seconds, requests). */
  units: number;
  /** Resolution or mode the reservation is quoted on, when the price has tiers. */
  tier?: string;
  /** Separately priced options. */
  extras?: readonly string[];
  /** The upstream body: known fields only, normalised. */
  upstream: Record<string, unknown>;
  /** Completion callback kept by the gateway, never sent upstream. */
  callbackUrl?: string;
}

export interface SubmitSpec<P extends TaskPlan> {
  /** TaskSubmitted family the family's projection recognises. */
  family: string;
  /** Upstream protocol (channel family). */
  channelFamily: string;
  plan: (body: unknown) => PlanResult<P>;
  /** Every field of the body that names a URL (references and the callback), for the URL policy; may depend on the model's rules. */
  urlFields: readonly UrlFieldSpec[] | ((plan: P) => readonly UrlFieldSpec[]);
  /** Fields of the upstream body that take raw Base64 (stored aside when large; see SubmitRequest). */
  base64Fields?: readonly string[];
  /** The action recorded on the task (default: the plan's). */
  actionOf?: (plan: P) => string;
  /** What a retried `Idempotency-Key` is matched on (default: the body); routes sharing a family add which route. */
  idempotencyBody?: (body: unknown, plan: P) => unknown;
  /** The upstream body, when it needs more than the rules (default: the plan's). */
  upstreamOf?: (plan: P, caller: Caller) => Promise<Record<string, unknown>>;
}

export function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const key = request.headers['idempotency-key'];
  return Array.isArray(key) ? key[0] : key;
}

export async function submitFamilyTask<P extends TaskPlan>(
  deps: GatewayDeps,
  request: FastifyRequest,
  spec: SubmitSpec<P>,
): Promise<{ task: EventDataOf<'TaskSubmitted'>; plan: P }> {
  const { caller } = request;
  const plan = acceptedPlan(spec.plan(request.body));
  assertModelAllowed(caller, plan.model, deps.catalog);
  await enforceUrlPolicyOn(deps, request.body, typeof spec.urlFields === 'function' ? spec.urlFields(plan) : spec.urlFields);
  const upstream = spec.upstreamOf ? await spec.upstreamOf(plan, caller) : plan.upstream;
  const metadata = metadataFor(request, deps.clock());
  const matchedOn = spec.idempotencyBody ? spec.idempotencyBody(request.body, plan) : request.body;
  const outcome = await submitIdempotently(deps, { key: idempotencyKeyOf(request), tokenId: caller.tokenId, body: matchedOn, metadata }, (ids) =>
    submitTask(deps, {
      family: spec.family,
      channelFamily: spec.channelFamily,
      action: spec.actionOf ? spec.actionOf(plan) : plan.action,
      model: plan.model,
      caller,
      request: upstream,
      ...(spec.base64Fields ? { base64Fields: spec.base64Fields } : {}),
      units: plan.units,
      ...(plan.tier !== undefined ? { tier: plan.tier } : {}),
      ...(plan.extras ? { extras: plan.extras } : {}),
      ...(plan.callbackUrl ? { callbackUrl: plan.callbackUrl } : {}),
      ...ids,
      metadata,
    }),
  );
  return { task: outcome.task, plan };
}
