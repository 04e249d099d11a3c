/**
 * The one plan/refusal type of every family's request rules: rules are plain functions that
 * return a plan or throw a `RuleRefusal` (kit/fields.ts); `planned` turns the first refusal
 * into a result, `acceptedPlan` into the 400 `invalid_request` every submit answers with.
 */
import type { z } from 'zod';
import { GatewayError } from '../../http/errors.js';
import { RuleRefusal } from './fields.js';
import { parsedBody } from './schema.js';

export type PlanResult<P> = { ok: true; plan: P } | { ok: false; param: string; message: string };

/** Runs rules that refuse by throwing and returns the first refusal as a result. */
export function planned<P>(rules: () => P): PlanResult<P> {
  try {
    return { ok: true, plan: rules() };
  } catch (error) {
    if (error instanceof RuleRefusal) return { ok: false, param: error.param, message: error.message };
    throw error;
  }
}

/** The plan, or the refusal as HTTP 400 `invalid_request` naming the field. */
export function acceptedPlan<P>(result: PlanResult<P>): P {
  if (!result.ok) throw new GatewayError(400, 'invalid_request', result.message, result.param);
  return result.plan;
}

/**
 * A family's two plan functions over its rules: `parsed`, of a body the route's schema parsed (the
 * route's handler holds it), and `raw`, of a raw body (the schema's first refusal, or the rules').
 */
export function planners<S extends z.ZodType, P>(schema: S, rules: (body: z.output<S>) => P) {
  return {
    parsed: (body: z.output<S>): PlanResult<P> => planned(() => rules(body)),
    raw: (raw: unknown): PlanResult<P> => planned(() => rules(parsedBody(schema, raw))),
  };
}
