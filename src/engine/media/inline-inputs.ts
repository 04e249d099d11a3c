/**
 * Inline inputs (data URIs, raw Base64) are kept out of the events: at submit every one longer
 * than INLINE_INPUT_MIN_CHARS is put in the AssetStore and the recorded request holds
 * `asset-input:<key>` in its place; before the upstream call the engine puts the value back.
 * Events stay far below the store's append limit (an art BLEND of five photos is megabytes),
 * and the upstream receives exactly the string the client sent.
 *
 * - Which strings: every data URI of the request (anywhere: a data URI is never prose), and
 *   where a family declares it (`base64Fields`, e.g. clip's `image`) a string of the Base64
 *   alphabet. Shorter ones stay inline; so does anything not ASCII.
 * - The asset holds the value's exact text (not the decoded bytes): restoring it is byte for
 *   byte what was sent, whatever the client's padding or line breaks.
 * - Keys: `inputs/<taskId>/<submit nonce>/<n>.<datauri|base64>`. The nonce is per submit
 *   attempt, so two racing submits of the same idempotent task never share (or delete) each
 *   other's inputs. Only references under the task's own `inputs/<taskId>/` are resolved: a
 *   client string that names another task's input is sent on as the text it is.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { AssetStore } from '../../ports/asset-store.js';

/** Strings at most this long stay inline in the event. */
export const INLINE_INPUT_MIN_CHARS = 4096;
export const INPUT_REFERENCE_PREFIX = 'asset-input:';
const CONTENT_TYPE = 'text/plain; charset=us-ascii';
/** Deeper than any request rule lets a request be; a bound on the walk itself. */
const MAX_DEPTH = 32;
const ASCII = /^[\t\n\r\x20-\x7e]*$/;
/** `data:<media type and parameters, no blanks>,`: prose that happens to start with "data:" is not one. */
const DATA_URI = /^data:[^\s,]{0,256},/i;
const BASE64 = /^[A-Za-z0-9+/=\r\n]+$/;

export interface InlineInput {
  key: string;
  text: string;
}

export interface PlannedInputs {
  /** The request to record: inline inputs replaced by their references. */
  request: Record<string, unknown>;
  /** What to store before the request is recorded. */
  inputs: InlineInput[];
}

/** An input a task's request refers to is no longer in the asset store. */
export class InputUnavailableError extends Error {
  constructor(readonly key: string) {
    super(`the input ${key} of this task is no longer stored`);
    this.name = 'InputUnavailableError';
  }
}

type Json = Record<string, unknown>;
const isRecord = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const join = (at: string, key: string): string => (at === '' ? key : `${at}.${key}`);
const taskPrefix = (taskId: string): string => `${INPUT_REFERENCE_PREFIX}inputs/${taskId}/`;

/** The concrete paths (`image`, `images.0`) a declared path (`images.*`) names in `value`. */
function expand(value: unknown, segments: readonly string[], at: string, out: Set<string>): void {
  const [head, ...rest] = segments;
  if (head === undefined) out.add(at);
  else if (head === '*') {
    if (Array.isArray(value)) value.forEach((item: unknown, i) => expand(item, rest, join(at, String(i)), out));
  } else if (isRecord(value) && Object.hasOwn(value, head)) expand(value[head], rest, join(at, head), out);
}

/** A deep copy of `value` with each string replaced by what `map` gives for it (depth-bounded). */
function mapStrings(value: unknown, at: string, depth: number, map: (text: string, path: string) => string): unknown {
  if (typeof value === 'string') return map(value, at);
  if (depth > MAX_DEPTH) return value;
  if (Array.isArray(value)) return value.map((item: unknown, i) => mapStrings(item, join(at, String(i)), depth + 1, map));
  // Object.fromEntries defines own properties, so a `__proto__` key stays a plain key.
  if (isRecord(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, mapStrings(item, join(at, key), depth + 1, map)]));
  return value;
}

/**
 * Pure apart from the nonce: which strings of `request` go to the asset store, under which
 * keys, and the request that records their references. `base64Fields` are paths in `request`
 * (`*`: every item of an array) where raw Base64 is taken.
 */
export function planInlineInputs(taskId: string, request: Json, base64Fields: readonly string[] = []): PlannedInputs {
  const rawBase64 = new Set<string>();
  for (const path of base64Fields) expand(request, path.split('.'), '', rawBase64);
  // Drawn for the first input only: most requests have none (2 µs a submit otherwise).
  let nonce: string | undefined;
  const inputs: InlineInput[] = [];
  const recorded = mapStrings(request, '', 0, (text, path) => {
    if (text.length <= INLINE_INPUT_MIN_CHARS) return text;
    const kind = DATA_URI.test(text.slice(0, 300)) ? 'datauri' : rawBase64.has(path) && BASE64.test(text) ? 'base64' : undefined;
    if (!kind || !ASCII.test(text)) return text;
    nonce ??= randomBytes(6).toString('hex');
    const key = `inputs/${taskId}/${nonce}/${inputs.length}.${kind}`;
    inputs.push({ key, text });
    return `${INPUT_REFERENCE_PREFIX}${key}`;
  });
  return { request: isRecord(recorded) ? recorded : {}, inputs };
}

/** Stores the planned inputs; on failure removes those already stored and rethrows. */
export async function storeInlineInputs(assets: AssetStore, inputs: readonly InlineInput[]): Promise<void> {
  try {
    await Promise.all(inputs.map((input) => assets.put(input.key, Buffer.from(input.text, 'latin1'), CONTENT_TYPE)));
  } catch (err) {
    await Promise.allSettled(inputs.map((input) => assets.delete(input.key)));
    throw err;
  }
}

/** Best effort: a submit that recorded nothing leaves none of its inputs behind. */
export async function discardInlineInputs(assets: AssetStore, inputs: readonly InlineInput[], log: Logger): Promise<void> {
  const results = await Promise.allSettled(inputs.map((input) => assets.delete(input.key)));
  const failed = results.filter((r) => r.status === 'rejected').length;
  if (failed > 0) log.warn({ keys: inputs.map((i) => i.key), failed }, 'inputs of a refused submit could not all be deleted');
}

/** The input keys a task's recorded request refers to (its own only). */
export function inputKeysOf(taskId: string, request: Json): string[] {
  const prefix = taskPrefix(taskId);
  const keys = new Set<string>();
  mapStrings(request, '', 0, (text) => {
    if (text.startsWith(prefix)) keys.add(text.slice(INPUT_REFERENCE_PREFIX.length));
    return text;
  });
  return [...keys];
}

/**
 * The request as the upstream must receive it: every reference to one of the task's inputs
 * replaced by the stored text. Throws InputUnavailableError when an input is gone.
 */
export async function resolveInlineInputs(assets: AssetStore, taskId: string, request: Json): Promise<Json> {
  const keys = inputKeysOf(taskId, request);
  if (keys.length === 0) return request;
  const texts = new Map<string, string>();
  await Promise.all(
    keys.map(async (key) => {
      const asset = await assets.get(key);
      if (!asset) throw new InputUnavailableError(key);
      texts.set(key, asset.bytes.toString('latin1'));
    }),
  );
  const prefix = taskPrefix(taskId);
  const resolved = mapStrings(request, '', 0, (text) => (text.startsWith(prefix) ? (texts.get(text.slice(INPUT_REFERENCE_PREFIX.length)) ?? text) : text));
  return isRecord(resolved) ? resolved : {};
}
