/**
 * What the families' plans share beyond their schemas: the refusal a plan throws for a rule that
 * spans fields or depends on the model (`refuse`, a `RuleRefusal` whose message starts with the
 * field: `<param>: <reason>`), the value checks the schemas use (URLs, image data URIs, pixel
 * sizes), the bounds of objects forwarded as given, reference counts, and the redaction of Base64
 * for the recorded request. Pure: no I/O, no clock. Each field's own rule is declared once, in
 * zod (kit/schema.ts and the family's schema.ts); `planned` (plan.ts) turns a refusal into a result.
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

// ---- free text --------------------------------------------------------------------------------

/**
 * Longest prompt (UTF-16 code units) of every image and video family; the spec shows none. The
 * largest documented upstream limit (32,000 characters for OpenAI's image models) is far above
 * what anyone types, and keeps a prompt from filling the events (docs/decisions/0049-free-text-bounds.md).
 */
export const MAX_PROMPT_CHARS = 32_000;

/** Objects forwarded upstream as given (e.g. `metadata`): at most this much JSON, this deep. */
export const MAX_FORWARDED_OBJECT_CHARS = 65_536;
export const MAX_FORWARDED_OBJECT_DEPTH = 16;

function deeperThan(value: unknown, levels: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (levels === 0) return true;
  return Object.values(value).some((item: unknown) => deeperThan(item, levels - 1));
}

/** Why an object or array recorded and forwarded without field-by-field rules is out of bounds, if it is. */
export function forwardedProblem(value: unknown): string | undefined {
  if (deeperThan(value, MAX_FORWARDED_OBJECT_DEPTH)) return `must be nested at most ${MAX_FORWARDED_OBJECT_DEPTH} levels deep`;
  const size = JSON.stringify(value)?.length ?? 0;
  if (size > MAX_FORWARDED_OBJECT_CHARS) return `must be at most ${MAX_FORWARDED_OBJECT_CHARS} characters of JSON, got ${size}`;
  return undefined;
}

/** Refuses such an object or array out of bounds. */
export function checkForwarded(value: unknown, param: string): void {
  const problem = forwardedProblem(value);
  if (problem !== undefined) refuse(param, problem);
}

/** Longest completion callback address; the spec shows none (docs/decisions/0047-callback-url-bounds.md). */
export const CALLBACK_URL_MAX = 2048;

// ---- video fields ------------------------------------------------------------------------

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
function redactDataUris(value: unknown): unknown {
  if (typeof value === 'string') return placeholderFor(value);
  if (Array.isArray(value)) return value.map(redactDataUris);
  // Object.fromEntries defines own properties, so a `__proto__` key stays a plain key.
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redactDataUris(item)]));
  return value;
}

/** The recorded copy of an upstream body: the body with every inline Base64 data URI shortened. */
export function recordedCopy(upstream: Record<string, unknown>): Record<string, unknown> {
  const recorded = redactDataUris(upstream);
  return isPlainObject(recorded) ? recorded : {};
}
