/**
 * Building blocks of the async image request rules (spec 4.9): field readers that refuse with
 * `{param, message}` (message = `<param>: <reason>`), reference-image syntax checks and the
 * Base64 redaction used for the recorded request. Pure: no I/O, no clock.
 *
 * Readers throw a `RuleRefusal`; `planAsyncImageRequest` turns the first one into its result.
 * An own field holding JSON `null` counts as omitted.
 */
import type { AsyncImagePlan } from '../async-request.js';

export type Body = Readonly<Record<string, unknown>>;

/** What a family's rules decide; the family, model and recorded copy are added by the caller. */
export type FamilyDraft = Pick<AsyncImagePlan, 'action' | 'units' | 'upstream'>;

export class RuleRefusal extends Error {
  constructor(
    readonly param: string,
    reason: string,
  ) {
    super(`${param}: ${reason}`);
    this.name = 'RuleRefusal';
  }
}

export function refuse(param: string, reason: string): never {
  throw new RuleRefusal(param, reason);
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

export function isOneOf<T extends string>(values: readonly T[], value: unknown): value is T {
  return typeof value === 'string' && (values as readonly string[]).includes(value);
}

/** An own field of the body; `null` and inherited names (`constructor`, …) count as absent. */
export function field(body: Body, key: string): unknown {
  if (!Object.hasOwn(body, key)) return undefined;
  const value = body[key];
  return value === null ? undefined : value;
}

export function has(body: Body, key: string): boolean {
  return field(body, key) !== undefined;
}

// ---- free text --------------------------------------------------------------------------------

/**
 * Longest prompt (UTF-16 code units) of every image and video family; the spec shows none. The
 * largest documented upstream limit (32,000 characters for OpenAI's image models) is far above
 * what anyone types, and keeps a prompt from filling the events (docs/decisions.md).
 */
export const MAX_PROMPT_CHARS = 32_000;

/** Refuses a string longer than `max` characters. */
export function checkLength(text: string, param: string, max: number): void {
  if (text.length > max) refuse(param, `must be at most ${max} characters, got ${text.length}`);
}

export function readPrompt(body: Body): string {
  const prompt = field(body, 'prompt');
  if (prompt === undefined) refuse('prompt', 'required, a non-empty string');
  if (typeof prompt !== 'string') refuse('prompt', 'must be a string');
  if (prompt.trim() === '') refuse('prompt', 'must not be empty');
  checkLength(prompt, 'prompt', MAX_PROMPT_CHARS);
  return prompt;
}

/** Objects forwarded upstream as given (e.g. `metadata`): at most this much JSON, this deep. */
export const MAX_FORWARDED_OBJECT_CHARS = 65_536;
export const MAX_FORWARDED_OBJECT_DEPTH = 16;

function deeperThan(value: unknown, levels: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (levels === 0) return true;
  return Object.values(value).some((item: unknown) => deeperThan(item, levels - 1));
}

/** Bounds an object or array that is recorded and forwarded without field-by-field rules. */
export function checkForwarded(value: unknown, param: string): void {
  if (deeperThan(value, MAX_FORWARDED_OBJECT_DEPTH)) refuse(param, `must be nested at most ${MAX_FORWARDED_OBJECT_DEPTH} levels deep`);
  const size = JSON.stringify(value)?.length ?? 0;
  if (size > MAX_FORWARDED_OBJECT_CHARS) refuse(param, `must be at most ${MAX_FORWARDED_OBJECT_CHARS} characters of JSON, got ${size}`);
}

/** An optional integer within [min, max]; `"2"`, `2.5` and `true` are refused. */
export function readInt(body: Body, key: string, min: number, max: number): number | undefined {
  const value = field(body, key);
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    refuse(key, `must be an integer from ${min} to ${max}`);
  }
  return value;
}

export function readEnum<T extends string>(body: Body, key: string, values: readonly T[]): T | undefined {
  const value = field(body, key);
  if (value === undefined) return undefined;
  if (!isOneOf(values, value)) refuse(key, `must be one of ${values.join(', ')}`);
  return value;
}

export function readString(body: Body, key: string, limits: { minLength: number; maxLength: number }): string | undefined {
  const value = field(body, key);
  if (value === undefined) return undefined;
  if (typeof value !== 'string') refuse(key, 'must be a string');
  if (value.length < limits.minLength || value.length > limits.maxLength) {
    refuse(key, limits.minLength > 0 ? `must be ${limits.minLength} to ${limits.maxLength} characters` : `must be at most ${limits.maxLength} characters`);
  }
  return value;
}

/** Refuses a field that this route does not take at all (any non-null value). */
export function forbid(body: Body, key: string, reason: string): void {
  if (has(body, key)) refuse(key, reason);
}

// ---- sizes --------------------------------------------------------------------------------

export type PixelSize = Readonly<{ width: number; height: number }>;

/** `<w>x<h>`: positive integers without leading zeros, at most 5 digits each, lowercase `x`. */
export function parsePixelSize(text: string): PixelSize | undefined {
  const match = /^([1-9]\d{0,4})x([1-9]\d{0,4})$/.exec(text);
  if (!match) return undefined;
  return { width: Number(match[1]), height: Number(match[2]) };
}

// ---- reference images ---------------------------------------------------------------------

/** Which reference forms a family takes. */
export type RefKind = 'url' | 'url-or-data';

const FORBIDDEN_IN_URL = /[\s\u0000-\u001f\u007f]/u;

/** Syntactic check only (scheme http/https, a host); the network-level guard is elsewhere. */
export function isHttpUrl(text: string): boolean {
  if (!/^https?:\/\//i.test(text) || FORBIDDEN_IN_URL.test(text)) return false;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return false;
  }
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
}

const IMAGE_DATA_URI = /^data:image\/[a-z0-9][a-z0-9.+-]*;base64,([A-Za-z0-9+/]+={0,2})$/;

/** `data:image/<lowercase format>;base64,<standard Base64>` with a non-empty, well-formed payload. */
export function isImageDataUri(text: string): boolean {
  const match = IMAGE_DATA_URI.exec(text);
  const payload = match?.[1];
  if (payload === undefined) return false;
  if (payload.endsWith('=')) return payload.length % 4 === 0;
  return payload.length % 4 !== 1;
}

function refDescription(kind: RefKind): string {
  return kind === 'url' ? 'a public http/https URL' : 'an http/https URL or a data:image/<format>;base64,<data> URI';
}

function isRef(kind: RefKind, text: string): boolean {
  return isHttpUrl(text) || (kind === 'url-or-data' && isImageDataUri(text));
}

/** An optional single reference given as one string. */
export function readRef(body: Body, key: string, kind: RefKind): string | undefined {
  const value = field(body, key);
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !isRef(kind, value)) refuse(key, `must be ${refDescription(kind)}`);
  return value;
}

/** An optional non-empty array of references; `max` undefined leaves the count to the caller. */
export function readRefList(body: Body, key: string, kind: RefKind, max: number | undefined): string[] | undefined {
  const value = field(body, key);
  if (value === undefined) return undefined;
  const count = max === undefined ? 'at least 1' : `1 to ${max}`;
  if (!Array.isArray(value) || value.length === 0 || (max !== undefined && value.length > max)) {
    refuse(key, `must be an array of ${count} references, each ${refDescription(kind)}`);
  }
  return value.map((item: unknown, index) => {
    if (typeof item !== 'string' || !isRef(kind, item)) refuse(key, `item ${index} must be ${refDescription(kind)}`);
    return item;
  });
}

// ---- recorded copy ------------------------------------------------------------------------

const BASE64_DATA_URI = /^(data:[^,]{0,200};base64,)([A-Za-z0-9+/=_-]*)$/;

/** `data:image/png;base64,…(12345 bytes)` for any Base64 data URI; other strings unchanged. */
export function placeholderFor(text: string): string {
  if (!text.startsWith('data:')) return text;
  const match = BASE64_DATA_URI.exec(text);
  const header = match?.[1];
  const payload = match?.[2];
  if (header === undefined || payload === undefined) return text;
  const padding = payload.endsWith('==') ? 2 : payload.endsWith('=') ? 1 : 0;
  const bytes = Math.max(0, Math.floor((payload.length * 3) / 4) - padding);
  return `${header}…(${bytes} bytes)`;
}

/** A deep copy with every inline Base64 data URI replaced by its placeholder. */
export function redactDataUris(value: unknown): unknown {
  if (typeof value === 'string') return placeholderFor(value);
  if (Array.isArray(value)) return value.map(redactDataUris);
  // Object.fromEntries defines own properties, so a `__proto__` key stays a plain key.
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redactDataUris(item)]));
  return value;
}
