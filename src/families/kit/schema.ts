/**
 * Zod building blocks for the families' request schemas, the only place a field's rule is
 * declared: its type, range and the words a refusal uses. The error mapper (src/http/errors.ts)
 * prefixes the field's path (`metadata.callback_url: must be …`). Optional fields accept JSON
 * `null` as omitted. What depends on other fields or on the model in a way a schema cannot say
 * stays with the family's plan (request.ts), which runs on the parsed body.
 */
import { z } from 'zod';
import { CALLBACK_URL_MAX, isHttpUrl, isImageDataUri, forwardedProblem, isPlainObject, MAX_PROMPT_CHARS, refuse, type RefKind } from './fields.js';

/** The request body: a JSON object; fields not declared are left to the rules (they ignore or refuse them). */
export function jsonBody<S extends z.core.$ZodLooseShape>(shape: S) {
  return z.looseObject(shape, { error: 'must be a JSON object' });
}

/** A field missing or `null` (which counts as omitted). */
export const absent = (input: unknown) => input === undefined || input === null;

// ---- patterns: what the checks below say, in the words of JSON Schema ----------------------------
//
// A check written as a `pattern` (or `maxLength`, `minimum` …) reaches the OpenAPI document, so a
// client or a generator (schemathesis) knows the rule; a `.refine` does not. The patterns are read
// by other engines than JavaScript's (Python's, Rust's), so they spell out what those read
// differently: `\s` (JavaScript's white space is its own set), `\d` (ASCII digits only here).

/** JavaScript's white space and line terminators (`\s`, what `trim()` removes), spelled out for a character class. */
export const WHITE_SPACE = '\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';

/** A string that is not blank: one character that is not white space (`text.trim() !== ''`). */
export const NON_BLANK = new RegExp(`[^${WHITE_SPACE}]`);

/** Same-length decimal strings from `lo` to `hi` (no sign, `lo <= hi`), as alternatives of a regex. */
function sameLengthRange(lo: string, hi: string): string[] {
  if (lo === hi) return [lo];
  const [first, last] = [Number(lo[0]), Number(hi[0])];
  const [restLo, restHi] = [lo.slice(1), hi.slice(1)];
  const n = restLo.length;
  if (first === last) return sameLengthRange(restLo, restHi).map((tail) => `${first}${tail}`);
  const anyTail = n === 0 ? '' : n === 1 ? '[0-9]' : `[0-9]{${n}}`;
  const out: string[] = [];
  let from = first;
  let to = last;
  if (restLo !== '0'.repeat(n)) {
    out.push(...sameLengthRange(restLo, '9'.repeat(n)).map((tail) => `${first}${tail}`));
    from = first + 1;
  }
  const lastFull = restHi === '9'.repeat(n);
  if (!lastFull) to = last - 1;
  if (from <= to) out.push(`${from === to ? from : `[${from}-${to}]`}${anyTail}`);
  if (!lastFull) out.push(...sameLengthRange('0'.repeat(n), restHi).map((tail) => `${last}${tail}`));
  return out;
}

/** The decimal numbers from `min` to `max` without leading zeros, as a regex group (not anchored). */
export function integerRangeSource(min: number, max: number): string {
  if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max) || min < 0 || min > max)
    throw new RangeError(`no pattern for the integers from ${min} to ${max}`);
  const alternatives: string[] = [];
  for (let length = String(min).length; length <= String(max).length; length++) {
    const lo = length === String(min).length ? String(min) : `1${'0'.repeat(length - 1)}`;
    const hi = length === String(max).length ? String(max) : '9'.repeat(length);
    alternatives.push(...sameLengthRange(lo, hi));
  }
  return `(?:${alternatives.join('|')})`;
}

/**
 * A regex matching exactly the strings of 1 to `digits` ASCII digits (leading zeros allowed) whose
 * value is from `min` to `max`: `/^\d{1,9}$/` and the range in one pattern JSON Schema can carry.
 */
export function integerRangePattern(min: number, max: number, digits = 9): RegExp {
  if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max) || min < 0 || min > max || String(max).length > digits) {
    throw new RangeError(`no pattern for the integers from ${min} to ${max} in ${digits} digits`);
  }
  const groups: string[] = [];
  for (let length = String(min).length; length <= String(max).length; length++) {
    const lo = length === String(min).length ? String(min) : `1${'0'.repeat(length - 1)}`;
    const hi = length === String(max).length ? String(max) : '9'.repeat(length);
    const zeros = digits - length === 0 ? '' : `0{0,${digits - length}}`;
    groups.push(`${zeros}(?:${sameLengthRange(lo, hi).join('|')})`);
  }
  return new RegExp(`^(?:${groups.join('|')})$`);
}

/** Characters no URL may hold (kit/fields.ts FORBIDDEN_IN_URL): white space and controls. */
const NOT_IN_URL = `${WHITE_SPACE}\\u0000-\\u001f\\u007f`;
/** A host name: dot-separated labels of letters, digits and inner hyphens, the last one opening with a letter (no IP literal). */
const HOST = '(?:[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*\\.)*[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*\\.?';

/**
 * http/https URLs the WHATWG parser reads with a host (isHttpUrl), in a form a pattern can say: a
 * host name (not an IP literal, which the URL policy refuses in most forms anyway), a port of at
 * most 4 digits, then any path, query and fragment. Narrower than isHttpUrl: the document admits
 * only URLs the gateway takes (the URL policy's checks of where a name resolves stay its own).
 */
const HTTP_URL_SOURCE = `[Hh][Tt][Tt][Pp][Ss]?://${HOST}(?::[0-9]{1,4})?(?:[/?#][^${NOT_IN_URL}]*)?`;

/** The Base64 of a data URI whose length is whole (isImageDataUri): no single leftover character, padding only to a multiple of 4. */
const BASE64_SOURCE = '(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2,4}|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{2}==)';

/** A `data:image/<format>;base64,<data>` URI exactly as isImageDataUri takes it. */
const IMAGE_DATA_URI_SOURCE = `data:image/[a-z0-9][a-z0-9.+-]*;base64,${BASE64_SOURCE}`;

/** The document's pattern of an http/https URL (see HTTP_URL_SOURCE); the refinement beside it checks it fully. */
export const HTTP_URL_PATTERN = `^${HTTP_URL_SOURCE}$`;

/**
 * An http/https URL as the document states it: the pattern, and no `format: uri`. RFC 3986 admits
 * ASCII only, while the gateway takes what a browser takes (`https://example.com/café.png`,
 * percent-encoded on the way out), so `uri` would document a rule the gateway does not keep.
 */
export const HTTP_URL_DOC = { type: 'string', pattern: HTTP_URL_PATTERN } as const;

/** A `data:image/<format>;base64,<data>` URI, exactly isImageDataUri. */
export const IMAGE_DATA_URI_PATTERN = new RegExp(`^${IMAGE_DATA_URI_SOURCE}$`);

/** An http/https URL (as HTTP_URL_PATTERN) or an image data URI; `more`: further alternatives (regex sources). */
export const urlOrDataUriPattern = (...more: string[]) => `^(?:${[HTTP_URL_SOURCE, IMAGE_DATA_URI_SOURCE, ...more].join('|')})$`;

/**
 * For a document-only rule between fields (an `anyOf` in `.meta`, which the rules check in their
 * own words): a field absent or `null` (which counts as omitted), as OpenAPI 3.0 writes `null`.
 */
export const ABSENT_OR_NULL = { type: 'string', nullable: true, enum: [null] } as const;

/** `must be at most N characters, got M` , as a `maxLength` the document shows. */
const atMost = (max: number) => ({ error: (issue: { input?: unknown }) => `must be at most ${max} characters, got ${String(issue.input).length}` });

/** A required prompt . */
export const prompt = z
  .string({ error: (issue) => (absent(issue.input) ? 'required, a non-empty string' : 'must be a string') })
  .regex(NON_BLANK, 'must not be empty')
  .max(MAX_PROMPT_CHARS, atMost(MAX_PROMPT_CHARS))
  .meta({ description: `the prompt, at most ${MAX_PROMPT_CHARS} characters` });

/**
 * A required string of at most `max` characters whose missing, `null` or blank value is refused
 * with the family's own `required …` wording (a prompt a route cannot do without).
 */
export const requiredText = (required: string, max = MAX_PROMPT_CHARS) =>
  z
    .string({ error: (issue) => (absent(issue.input) ? required : 'must be a string') })
    .max(max, atMost(max))
    .regex(NON_BLANK, required);

/** A string of at most `max` characters, required where it stands: `.nullish()` makes a field optional. */
export const limitedString = (max = MAX_PROMPT_CHARS) => z.string({ error: 'must be a string' }).max(max, atMost(max));

/** An optional string of at most `max` characters. */
export const optionalString = (max = MAX_PROMPT_CHARS) => limitedString(max).nullish();

/** An optional non-blank string of at most `max` characters. */
export const text = (max: number) =>
  z.string({ error: 'must be a string' }).regex(NON_BLANK, 'must not be empty').max(max, `must be at most ${max} characters`).nullish();

/** An optional string with a length range. */
export const boundedString = (limits: { minLength: number; maxLength: number }) => {
  const range = limits.minLength > 0 ? `must be ${limits.minLength} to ${limits.maxLength} characters` : `must be at most ${limits.maxLength} characters`;
  return z.string({ error: 'must be a string' }).min(limits.minLength, range).max(limits.maxLength, range).nullish();
};

/** An optional integer within [min, max]: `"2"`, `2.5` and `true` are refused. */
export const int = (min: number, max: number) => {
  const message = `must be an integer from ${min} to ${max}`;
  return z.number({ error: message }).int(message).min(min, message).max(max, message).nullish();
};

/** An optional number within [min, max] (strings refused). */
export const number = (min: number, max: number) => {
  const message = `must be a number from ${min} to ${max}`;
  return z.number({ error: message }).min(min, message).max(max, message).nullish();
};

/** An optional boolean. */
export const bool = () => z.boolean({ error: 'must be true or false' }).nullish();

/** An optional one of `values`. */
export const oneOf = <const T extends readonly [string, ...string[]]>(values: T) => z.enum(values, { error: `must be one of ${values.join(', ')}` }).nullish();

/** A required one of `values`, with the reader's `required, …` wording when missing. */
export const requiredOneOf = <const T extends readonly [string, ...string[]]>(values: T, required: string) =>
  z.enum(values, { error: (issue) => (absent(issue.input) ? required : `must be one of ${values.join(', ')}`) });

/**
 * A field this body does not take: any value but `null` is refused with `reason` (the
 * document says `null` only, which OpenAPI 3.0 writes as a nullable enum of `null`).
 */
export const refused = (reason: string) =>
  z
    .null({ error: reason })
    .optional()
    .meta({ description: `not taken: ${reason}` });

/** A field that must not be there at all (even as null), refused in the rules' words. */
export const notTaken = (reason: string) =>
  z
    .never({ error: reason })
    .optional()
    .meta({ description: `refused: ${reason}` });

/** An optional completion callback address. */
export const callbackUrl = () => {
  const message = `must be an http or https URL of at most ${CALLBACK_URL_MAX} characters`;
  return z
    .string({ error: message })
    .max(CALLBACK_URL_MAX, message)
    .refine((url) => isHttpUrl(url), message)
    .meta({ ...HTTP_URL_DOC, description: 'completion callback: a public http/https URL the gateway posts the final state to' })
    .nullish();
};

/** An optional plain object; its fields are the rules' (or a nested schema's). */
export const object = <S extends z.core.$ZodLooseShape>(shape: S = {} as S) => z.looseObject(shape, { error: 'must be an object' }).nullish();

/**
 * An optional object forwarded upstream as given: its keys in
 * `shape` are checked first, then how deep it is nested and how long its JSON is.
 */
export const forwardedObject = <S extends z.core.$ZodLooseShape>(shape: S = {} as S) =>
  z
    .looseObject(shape, { error: 'must be an object' })
    .superRefine((value, ctx) => {
      const problem = forwardedProblem(value);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
    })
    .nullish();

function refDescription(kind: RefKind): string {
  return kind === 'url' ? 'a public http/https URL' : 'an http/https URL or a data:image/<format>;base64,<data> URI';
}

const isRef = (kind: RefKind) => (text: string) => isHttpUrl(text) || (kind === 'url-or-data' && isImageDataUri(text));

/** The document's pattern of a reference of `kind`. */
const refPattern = (kind: RefKind) => (kind === 'url' ? HTTP_URL_PATTERN : urlOrDataUriPattern());

/** One reference given as a string; `asArray`: the words for a list given instead. */
export const ref = (kind: RefKind, asArray?: string) => {
  const message = `must be ${refDescription(kind)}`;
  return z
    .string({ error: (issue) => (asArray !== undefined && Array.isArray(issue.input) ? asArray : message) })
    .refine(isRef(kind), message)
    .meta({ pattern: refPattern(kind) })
    .nullish();
};

/** A non-empty array of references; `max` undefined leaves the count to the rules. */
export const refList = (kind: RefKind, max?: number) => {
  const count = max === undefined ? 'at least 1' : `1 to ${max}`;
  const message = `must be an array of ${count} references, each ${refDescription(kind)}`;
  const item = z.string().refine(isRef(kind));
  // Every item is checked below, in the readers' words: typed as the strings they then are.
  const list = z
    .array(
      z.custom<string>(() => true),
      { error: message },
    )
    .min(1, message);
  return (max === undefined ? list : list.max(max, message))
    .superRefine((items, ctx) => {
      const bad = items.findIndex((value) => !item.safeParse(value).success);
      if (bad >= 0) ctx.addIssue({ code: 'custom', message: `item ${bad} must be ${refDescription(kind)}` });
    })
    .meta({ items: { type: 'string', pattern: refPattern(kind) } })
    .nullish();
};

/** A zod schema as the document shows it (for a field whose check is composed by hand, e.g. `byKind`). */
export function documentedAs(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, { target: 'openapi-3.0', io: 'input', unrepresentable: 'any' });
  return json;
}

type Kind = 'string' | 'array' | 'object';
const kindOf = (value: unknown): Kind | undefined =>
  typeof value === 'string' ? 'string' : Array.isArray(value) ? 'array' : isPlainObject(value) ? 'object' : undefined;

/**
 * A field that takes values of several JSON kinds (a string or an array of parts, a URL or
 * `{url}`), each checked by the schema of its kind, in place: a zod union of them answers an
 * item's issue as the union's when every member fails, not at the item. Any other value (missing
 * too) is refused with `error`. The value passes through as given; documented as the kinds' anyOf.
 */
export function byKind<K extends Partial<Record<Kind, z.ZodType>>>(kinds: K, error: string | ((input: unknown) => string)) {
  const members = Object.values(kinds).filter((schema): schema is z.ZodType => schema !== undefined);
  return z
    .custom<z.output<NonNullable<K[keyof K]>>>(() => true)
    .superRefine((value, ctx) => {
      const kind = kindOf(value);
      const schema = kind === undefined ? undefined : kinds[kind];
      if (schema === undefined) {
        ctx.addIssue({ code: 'custom', message: typeof error === 'string' ? error : error(value) });
        return;
      }
      const result = schema.safeParse(value);
      for (const issue of result.error?.issues ?? []) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
    })
    .meta(members.length === 1 ? documentedAs(members[0]!) : documentedAs(z.union(members)));
}

/** The path parameter naming a task. */
export const taskIdParams = z.object({ task_id: z.string().meta({ description: 'the task id the submit answered' }) });

/**
 * The `Idempotency-Key` header every submit takes. Its length (1 to 255) is checked with the rest
 * of idempotency (src/engine/tasks/idempotency.ts), which names the header as clients spell it.
 */
export const submitHeaders = z.looseObject({
  // The length is the document's only: a value HTTP trims to nothing (blanks only) is no key.
  'idempotency-key': z.string().optional().meta({
    minLength: 1,
    maxLength: 255,
    pattern: '[^ \\t]',
    description: '1 to 255 characters: a retry with the same key and body answers the same task without charging again; another body is refused (409)',
  }),
});

// ---- video fields (vidgen, Vid-H3, clip, motion) -----------------------------------------------

/**
 * Optional whole seconds from `min` to `max`, as an integer or a numeric string
 * (forms and the common clients send `"5"`); decimals, signs and blanks are refused.
 */
export const wholeSeconds = (min: number, max: number) => {
  const message = `must be a whole number of seconds from ${min} to ${max} (an integer or a numeric string)`;
  return z
    .union(
      [
        z.int({ error: message }).min(min, message).max(max, message),
        z.string({ error: message }).regex(integerRangePattern(min, max), message),
        // Inside the union, not `.nullish()` around it: OpenAPI 3.0 has no type for a nullable union.
        z.null(),
      ],
      { error: message },
    )
    .optional();
};

/** A parsed optional field that holds a value (`null` counts as omitted, as the schemas take it). */
export const given = <T>(value: T | null | undefined): value is T => value !== undefined && value !== null;

/** The seconds a `wholeSeconds` field holds (its numeric string read as the number). */
export const secondsOf = (value: number | string | null | undefined): number | undefined => (value === undefined || value === null ? undefined : Number(value));

/**
 * A field that may also be given under a second name (`model` for `model_name`), which is read
 * only when the field itself is absent: checked before any of the body's own fields, as the rules
 * read the model first. A missing pair is refused under the field's name, a bad alias under its own.
 */
export const withAlias = <T extends z.ZodType>(name: string, alias: string, field: z.ZodType, body: T) =>
  z.preprocess((value, ctx) => {
    if (isPlainObject(value) && absent(value[name])) {
      const given = value[alias];
      const result = field.safeParse(given);
      if (!result.success) ctx.addIssue({ code: 'custom', path: [absent(given) ? name : alias], message: result.error.issues[0]?.message ?? 'invalid' });
    }
    return value;
  }, body);

const HTTP_URL = 'must be an http or https URL';

/** One http/https URL, required where it stands: `.nullish()` makes a field optional. */
export const httpUrl = () => z.string({ error: HTTP_URL }).refine(isHttpUrl, HTTP_URL).meta(HTTP_URL_DOC);

/**
 * An object field whose keys are a closed list (a `metadata` forwarded upstream): its first other
 * key is refused as the rules refuse it (`metadata.fps: unknown key; metadata takes …`), before
 * any of the object's own fields is checked, as they read them.
 */
export const onlyKeys = <T extends z.ZodType>(name: string, keys: readonly string[], schema: T) =>
  z.preprocess((value, ctx) => {
    const unknown = isPlainObject(value) ? Object.keys(value).find((key) => !keys.includes(key)) : undefined;
    if (unknown !== undefined) ctx.addIssue({ code: 'custom', path: [unknown], message: `unknown key; ${name} takes ${keys.join(', ')}` });
    return value;
  }, schema);

/**
 * A value checked by a field's schema where the rules read it (a fallback read only when the
 * field that overrides it is absent), or its first issue as the refusal naming `param`.
 */
export function parsedField<S extends z.ZodType>(schema: S, value: unknown, param: string): z.output<S> {
  return parsedAt(schema, value, [param]);
}

/**
 * The body as the route's schema parses it, or its first issue as the refusal the route's own
 * validation answers (src/http/errors.ts names the field by the issue's path the same way). For
 * the plan functions' callers that hold a raw body: the route's handler already holds it parsed.
 */
export function parsedBody<S extends z.ZodType>(schema: S, raw: unknown): z.output<S> {
  return parsedAt(schema, raw, []);
}

/** `value` parsed, or its first issue refused at `at` + the issue's path (`body` when both are empty). */
function parsedAt<S extends z.ZodType>(schema: S, value: unknown, at: readonly string[]): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const first = result.error.issues[0];
  return refuse([...at, ...(first?.path.map(String) ?? [])].join('.') || 'body', first?.message ?? 'invalid');
}
