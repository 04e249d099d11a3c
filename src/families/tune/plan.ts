/**
 * What the `tune` request rules decide (spec 4.11) and the field readers they share. Pure:
 * the same body always gives the same answer. Refusals name the field first (`<field>: …`).
 */
import { type Body, RuleRefusal, field, isHttpUrl, refuse } from '../images/rules/shared.js';

export type TuneAction = 'LYRICS' | 'MUSIC';

export interface TunePlan {
  action: TuneAction;
  /** Billing model: one request of `tune_lyrics` or `tune_music`. */
  model: 'tune_lyrics' | 'tune_music';
  units: 1;
  /** The upstream body: known fields only, defaults applied. */
  upstream: Record<string, unknown>;
  /** Completion callback (`hookUrl` for lyrics, `callback_url` for music). */
  callbackUrl?: string;
}

export type TunePlanResult = { ok: true; plan: TunePlan } | { ok: false; param: string; message: string };

export const CALLBACK_URL_MAX = 2048;

/** Runs rules that throw `RuleRefusal` and turns the first refusal into a result. */
export function planWith(rules: () => TunePlan): TunePlanResult {
  try {
    return { ok: true, plan: rules() };
  } catch (error) {
    if (error instanceof RuleRefusal) return { ok: false, param: error.param, message: error.message };
    throw error;
  }
}

/** An optional string that is not blank, at most `max` characters. */
export function readText(body: Body, key: string, max: number): string | undefined {
  const value = field(body, key);
  if (value === undefined) return undefined;
  if (typeof value !== 'string') refuse(key, 'must be a string');
  if (value.trim() === '') refuse(key, 'must not be empty');
  if (value.length > max) refuse(key, `must be at most ${max} characters`);
  return value;
}

export function readBool(body: Body, key: string): boolean | undefined {
  const value = field(body, key);
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') refuse(key, 'must be true or false');
  return value;
}

/** An optional number from `min` to `max` inclusive (strings refused). */
export function readNumber(body: Body, key: string, min: number, max: number): number | undefined {
  const value = field(body, key);
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) refuse(key, `must be a number from ${min} to ${max}`);
  return value;
}

/** An optional completion callback address: an absolute http/https URL. */
export function readCallbackUrl(body: Body, key: string): string | undefined {
  const value = field(body, key);
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length > CALLBACK_URL_MAX || !isHttpUrl(value)) {
    refuse(key, `must be an http or https URL of at most ${CALLBACK_URL_MAX} characters`);
  }
  return value;
}
