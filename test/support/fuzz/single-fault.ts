/**
 * Single-fault inputs: a body the route accepts with exactly one change, one field at a time.
 * The fields come from the valid body (the fuzz world's template) and from the route's body
 * schema in the OpenAPI document the gateway serves, so optional fields the template leaves out
 * are faulted too; objects are entered (`metadata.ratio`, `metadata.input.prompt`, the first
 * item of an array of objects: `messages[0].role`) up to three levels down; a caller may add
 * fields the readers know but the schema leaves free (`metadata.parameters.duration`). Every case is named
 * `<field>: <fault kind>`, and the same document and template always give the same cases.
 */
import type { Json } from './json.js';

/** The slice of a JSON schema (as the OpenAPI document writes it) that faults are made from. */
export interface Schema {
  $ref?: string;
  type?: string;
  nullable?: boolean;
  enum?: unknown[];
  format?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean | number;
  exclusiveMaximum?: boolean | number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  items?: Schema;
  properties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
}

export interface OpenApiDoc {
  paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: Schema }> }; parameters?: Parameter[] }>>;
  components?: { schemas?: Record<string, Schema> };
}

export interface Parameter {
  name: string;
  in: string;
  schema?: Schema;
}

export type Step = string | number;

export interface Fault {
  /** `metadata.ratio: empty string`. */
  name: string;
  /** The whole body sent. */
  body: Json;
}

/** A field's place in the body and what its schema (all branches of it) says. */
interface FieldFacts {
  path: Step[];
  /** The template's value there (undefined: the template leaves the field out). */
  value: Json | undefined;
  leaves: Schema[];
}

export function resolve(doc: OpenApiDoc, schema: Schema | undefined): Schema | undefined {
  if (!schema?.$ref) return schema;
  const name = schema.$ref.replace(/^#\/components\/schemas\//, '');
  return resolve(doc, doc.components?.schemas?.[name]);
}

/** The schema's branches (anyOf, oneOf, allOf flattened), each resolved. */
function leavesOf(doc: OpenApiDoc, schema: Schema | undefined): Schema[] {
  const s = resolve(doc, schema);
  if (!s) return [];
  const branches = [...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])];
  const own = s.type || s.properties || s.enum || s.items ? [s] : [];
  return [...own, ...branches.flatMap((b) => leavesOf(doc, b))];
}

/** Properties of every object branch, first declaration of a name first. */
function propertiesOf(doc: OpenApiDoc, leaves: readonly Schema[]): Map<string, Schema[]> {
  const out = new Map<string, Schema[]>();
  for (const leaf of leaves) {
    for (const [key, schema] of Object.entries(leaf.properties ?? {})) out.set(key, [...(out.get(key) ?? []), ...leavesOf(doc, schema)]);
  }
  return out;
}

const isObject = (v: Json | undefined): v is { [key: string]: Json } => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Every field to fault: the template's and the schema's, entered up to `depth` levels. */
function fieldsOf(doc: OpenApiDoc, value: Json | undefined, leaves: readonly Schema[], path: Step[], depth: number): FieldFacts[] {
  const declared = propertiesOf(doc, leaves);
  const keys = [...(isObject(value) ? Object.keys(value) : []), ...declared.keys()].filter((k, i, all) => all.indexOf(k) === i);
  const out: FieldFacts[] = [];
  for (const key of keys) {
    const child = isObject(value) ? value[key] : undefined;
    const childLeaves = declared.get(key) ?? [];
    out.push({ path: [...path, key], value: child, leaves: childLeaves });
    if (depth <= 1) continue;
    const objectLeaves = childLeaves.filter((l) => l.type === 'object' || l.properties);
    if (isObject(child) || objectLeaves.some((l) => Object.keys(l.properties ?? {}).length > 0)) {
      out.push(...fieldsOf(doc, child, objectLeaves, [...path, key], depth - 1));
    }
    // An array of objects: the first item's fields.
    const itemLeaves = childLeaves.filter((l) => l.type === 'array' && l.items).flatMap((l) => leavesOf(doc, l.items));
    const first = Array.isArray(child) ? child[0] : undefined;
    if (isObject(first)) out.push(...fieldsOf(doc, first, itemLeaves, [...path, key, 0], depth - 1));
  }
  return out;
}

export function fieldName(path: readonly Step[]): string {
  return path.map((s, i) => (typeof s === 'number' ? `[${s}]` : i === 0 ? s : `.${s}`)).join('');
}

/** `value` with the node at `path` set (or removed, for `undefined`); objects along the way are created. */
export function setAt(value: Json, path: readonly Step[], next: Json | undefined): Json {
  const [head, ...rest] = path;
  if (head === undefined) return next ?? null;
  if (typeof head === 'number') {
    const copy = Array.isArray(value) ? [...value] : [];
    if (rest.length === 0 && next === undefined) copy.splice(head, 1);
    else copy[head] = setAt(copy[head] ?? {}, rest, next);
    return copy;
  }
  const copy: { [key: string]: Json } = isObject(value) ? { ...value } : {};
  if (rest.length === 0 && next === undefined) delete copy[head];
  else copy[head] = setAt(copy[head] ?? {}, rest, next);
  return copy;
}

const URL_NAME = /(url|hook|uri)$|^(image|images|image_tail|first_frame|last_frame|input_reference)/i;
const A_URL = 'https://media.example.com/';
const longUrl = (length: number) => A_URL + 'a'.repeat(length - A_URL.length);

/** Enum strings of every field of every body of a family, in document order. */
export function enumValuesOf(doc: OpenApiDoc, schemas: readonly Schema[]): string[] {
  const out: string[] = [];
  const walk = (schema: Schema | undefined, seen: Set<Schema>) => {
    const s = resolve(doc, schema);
    if (!s || seen.has(s)) return;
    seen.add(s);
    for (const v of s.enum ?? []) if (typeof v === 'string' && !out.includes(v)) out.push(v);
    for (const child of [...Object.values(s.properties ?? {}), ...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? []), s.items]) walk(child, seen);
  };
  for (const schema of schemas) walk(schema, new Set());
  return out;
}

/** The faults of one field, as `[kind, value]` (`undefined`: the field removed). */
function faultsOfField(field: FieldFacts, familyEnums: readonly string[]): Array<[string, Json | undefined]> {
  const { leaves, value } = field;
  const types = new Set(leaves.map((l) => l.type).filter(Boolean));
  const key = String(field.path.filter((s) => typeof s === 'string').at(-1));
  const out: Array<[string, Json | undefined]> = [];
  if (value !== undefined) out.push(['removed', undefined]);
  out.push(
    ['null', null],
    ['type number', 7],
    ['type string "x"', 'x'],
    ['type boolean', true],
    ['type array', ['x']],
    ['type object', { x: 'x' }],
    ['empty string', ''],
    ['whitespace-only string', '   '],
  );

  const numeric = types.has('integer') || types.has('number') || typeof value === 'number';
  if (numeric) {
    const numbers = leaves.filter((l) => l.type === 'integer' || l.type === 'number');
    const mins = numbers.map((l) => l.minimum).filter((m): m is number => m !== undefined);
    const maxs = numbers.map((l) => l.maximum).filter((m): m is number => m !== undefined);
    const min = mins.length ? Math.min(...mins) : undefined;
    const max = maxs.length ? Math.max(...maxs) : undefined;
    if (min !== undefined) out.push(['number below min', min - 1]);
    if (max !== undefined) out.push(['number above max', max + 1]);
    const base = typeof value === 'number' ? value : (min ?? 1);
    if (types.has('integer') || Number.isInteger(value)) out.push(['number non-integer', base + 0.5]);
    out.push(['number zero', 0], ['number negative', -1], ['number huge', 1e21], ['number as a string', String(base)]);
  }

  const textual = types.has('string') || typeof value === 'string';
  if (textual) {
    const strings = leaves.filter((l) => l.type === 'string');
    const maxLengths = strings.map((l) => l.maxLength).filter((m): m is number => m !== undefined);
    if (maxLengths.length) out.push(['string one over max length', 'a'.repeat(Math.max(...maxLengths) + 1)]);
    out.push(['string very long', 'a'.repeat(70_000)]);
  }

  const enums = leaves.flatMap((l) => (l.enum ?? []).filter((v): v is string => typeof v === 'string'));
  if (enums.length) {
    const first = enums[0]!;
    out.push(['enum unknown value', 'not-a-known-value']);
    const flipped = first.toUpperCase() === first ? first.toLowerCase() : first.toUpperCase();
    if (!enums.includes(flipped)) out.push(['enum value in another case', flipped]);
    const other = familyEnums.find((v) => !enums.includes(v));
    if (other !== undefined) out.push(['enum value of another field of the family', other]);
  }

  const urlish = leaves.some((l) => l.format === 'uri') || URL_NAME.test(key) || (typeof value === 'string' && /^https?:\/\//.test(value));
  if (urlish) {
    out.push(
      ['url ftp scheme', 'ftp://x'],
      ['url without host', 'http://'],
      ['url private address', 'http://127.0.0.1/x'],
      ['url over 2048 characters', longUrl(2049)],
      ['url over 8192 characters', longUrl(8193)],
    );
  }

  const arrays = leaves.filter((l) => l.type === 'array');
  if (arrays.length || Array.isArray(value)) {
    const item: Json = Array.isArray(value) && value.length ? value[0]! : 'x';
    const maxItems = arrays.map((l) => l.maxItems).filter((m): m is number => m !== undefined);
    out.push(['array empty', []]);
    if (maxItems.length) out.push(['array one item too many', Array.from({ length: Math.max(...maxItems) + 1 }, () => item)]);
    else out.push(['array of 65 items', Array.from({ length: 65 }, () => item)]);
    const wrong: Json = typeof item === 'number' ? 'x' : 7;
    out.push(['array item of a wrong type', Array.isArray(value) && value.length ? [wrong, ...value.slice(1)] : [wrong]]);
  }

  if (types.has('object') || isObject(value)) {
    out.push(['object empty', {}], ['object with an unknown field', { ...(isObject(value) ? value : {}), unknown_field: 'x' }]);
  }
  return out;
}

/** Faults of the body as a whole. */
function bodyFaults(template: Json): Fault[] {
  return [
    { name: 'body: as sent (valid)', body: template },
    { name: 'body: an array', body: [template] },
    { name: 'body: an empty array', body: [] },
    { name: 'body: a string', body: 'x' },
    { name: 'body: a number', body: 7 },
    { name: 'body: null', body: null },
    { name: 'body: an empty object', body: {} },
    { name: 'body: an unknown extra field', body: { ...(isObject(template) ? template : {}), unknown_field: 'x' } },
  ];
}

/**
 * The single-fault bodies of one JSON operation: the body-level faults, then every field's
 * faults. `familySchemas` are the body schemas of the operation's family (for values of another
 * enum of the same family).
 */
export function singleFaults(
  doc: OpenApiDoc,
  template: Json,
  bodySchema: Schema | undefined,
  familySchemas: readonly Schema[],
  options: { depth?: number; extra?: ReadonlyArray<{ path: Step[]; schema: Schema }> } = {},
): Fault[] {
  const familyEnums = enumValuesOf(doc, familySchemas);
  const faults = bodyFaults(template);
  const names = new Set(faults.map((f) => f.name));
  const fields = fieldsOf(doc, template, leavesOf(doc, bodySchema), [], options.depth ?? 3);
  const known = new Set(fields.map((f) => fieldName(f.path)));
  for (const { path, schema } of options.extra ?? []) {
    if (!known.has(fieldName(path))) fields.push({ path, value: undefined, leaves: leavesOf(doc, schema) });
  }
  for (const field of fields) {
    for (const [kind, value] of faultsOfField(field, familyEnums)) {
      const name = `${fieldName(field.path)}: ${kind}`;
      if (names.has(name)) continue;
      names.add(name);
      faults.push({ name, body: setAt(template, field.path, value) });
    }
  }
  return faults;
}

/** The operations' query faults: each declared query parameter alone, with one bad value. */
export function queryFaults(parameters: readonly Parameter[], doc: OpenApiDoc): Array<{ name: string; query: string }> {
  const out: Array<{ name: string; query: string }> = [{ name: 'query: none (valid)', query: '' }];
  for (const p of parameters.filter((x) => x.in === 'query')) {
    const leaves = leavesOf(doc, p.schema);
    const values: Array<[string, string]> = [
      ['empty', ''],
      ['whitespace-only', '   '],
      ['"x"', 'x'],
      ['negative', '-1'],
      ['non-integer', '1.5'],
      ['huge', '99999999999999999999999'],
      ['exponent', '1e3'],
      ['repeated', '1&' + encodeURIComponent(p.name) + '=2'],
      ['very long', 'a'.repeat(5_000)],
    ];
    const min = leaves.find((l) => l.minimum !== undefined)?.minimum;
    const max = leaves.find((l) => l.maximum !== undefined)?.maximum;
    const maxLength = leaves.find((l) => l.maxLength !== undefined)?.maxLength;
    const enums = leaves.flatMap((l) => (l.enum ?? []).filter((v): v is string => typeof v === 'string'));
    if (min !== undefined && min > Number.MIN_SAFE_INTEGER) values.push(['below min', String(min - 1)]);
    if (max !== undefined && max < Number.MAX_SAFE_INTEGER) values.push(['above max', String(max + 1)]);
    if (maxLength !== undefined) values.push(['one over max length', 'a'.repeat(maxLength + 1)]);
    if (enums.length) values.push(['valid enum value', enums[0]!], ['unknown enum value', 'not-a-known-value']);
    for (const [kind, value] of values) {
      const encoded = kind === 'repeated' ? value : encodeURIComponent(value);
      out.push({ name: `${p.name}: ${kind}`, query: `?${encodeURIComponent(p.name)}=${encoded}` });
    }
  }
  return out;
}

// ---- multipart forms ----------------------------------------------------------------------------

export interface FormPart {
  name: string;
  value: string | Buffer;
  /** A file part: its file name and content type. */
  file?: { filename: string; contentType: string };
}

/** `{a: {b: [1]}}` → `a[b][]=1`, the way the openai client sends a form; null and empty values send nothing. */
export function formFieldsOf(body: { [key: string]: Json }): FormPart[] {
  const out: FormPart[] = [];
  const walk = (name: string, value: Json): void => {
    if (value === null) return;
    if (Array.isArray(value)) value.forEach((v) => walk(`${name}[]`, v));
    else if (typeof value === 'object') for (const [k, v] of Object.entries(value)) walk(`${name}[${k}]`, v);
    else out.push({ name, value: String(value) });
  };
  for (const [k, v] of Object.entries(body)) walk(k, v);
  return out;
}

export function encodeForm(parts: readonly FormPart[], boundary = 'singleFaultBoundary7MA4YWxk'): { contentType: string; payload: Buffer } {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    const disposition = `Content-Disposition: form-data; name="${p.name}"${p.file ? `; filename="${p.file.filename}"\r\nContent-Type: ${p.file.contentType}` : ''}`;
    chunks.push(Buffer.from(`--${boundary}\r\n${disposition}\r\n\r\n`), Buffer.from(p.value), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { contentType: `multipart/form-data; boundary=${boundary}`, payload: Buffer.concat(chunks) };
}
