/**
 * The field readers every family's request rules use: they refuse with `{param, message}`
 * (message = `<param>: <reason>`), check reference syntax, and redact Base64 for the recorded
 * request. Pure: no I/O, no clock.
 *
 * Readers throw a `RuleRefusal`; `planned` (plan.ts) turns the first one into a result.
 * An own field holding JSON `null` counts as omitted.
 */
export type Body = Readonly<Record<string, unknown>>;

/** What a model's rules decide; the family, model and recorded copy are added by the caller. */
export interface FamilyDraft {
  action: 'generate' | 'edit';
  /** Images the reservation is quoted on. */
  units: number;
  /** What is sent upstream: known fields only, normalised. */
  upstream: Record<string, unknown>;
}

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
 * what anyone types, and keeps a prompt from filling the events (docs/decisions/0049-free-text-bounds.md).
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
export function readInt(body: Body, key: string, min: number, max: number, param = key): number | undefined {
  const value = field(body, key);
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    refuse(param, `must be an integer from ${min} to ${max}`);
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

/** An optional string that is not blank, at most `max` characters. */
export function readText(body: Body, key: string, max: number): string | undefined {
  const value = field(body, key);
  if (value === undefined) return undefined;
  if (typeof value !== 'string') refuse(key, 'must be a string');
  if (value.trim() === '') refuse(key, 'must not be empty');
  if (value.length > max) refuse(key, `must be at most ${max} characters`);
  return value;
}

export function readBool(body: Body, key: string, param = key): boolean | undefined {
  const value = field(body, key);
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') refuse(param, 'must be true or false');
  return value;
}

/** An optional number from `min` to `max` inclusive (strings refused). */
export function readNumber(body: Body, key: string, min: number, max: number): number | undefined {
  const value = field(body, key);
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) refuse(key, `must be a number from ${min} to ${max}`);
  return value;
}

/** Longest completion callback address; the spec shows none (docs/decisions/0047-callback-url-bounds.md). */
export const CALLBACK_URL_MAX = 2048;

/** An optional completion callback address (spec 6.2): an absolute http/https URL the gateway posts to itself. */
export function readCallbackUrl(body: Body, key: string, param = key): string | undefined {
  const value = field(body, key);
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length > CALLBACK_URL_MAX || !isHttpUrl(value)) {
    refuse(param, `must be an http or https URL of at most ${CALLBACK_URL_MAX} characters`);
  }
  return value;
}

// ---- video fields ------------------------------------------------------------------------

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
