/**
 * `multipart/form-data` bodies for `POST /v1/videos`: the official `openai` client's
 * `videos.create` always sends a form, nesting objects as `key[name]` and arrays as `key[]`
 * (openai/internal/uploads.js). The form is decoded into the same shape a JSON body has, so one
 * set of rules serves both; every value stays a string (the rules accept numeric strings) unless
 * its part is declared `application/json` (how OpenAPI encodes an object property of a form, e.g.
 * `metadata`), which brings its JSON value; an uploaded file becomes an `UploadedFile`, which the
 * rules refuse where a URL is expected.
 * Reading the form: the shared reader (families/kit/multipart.ts), bounded as a JSON body is
 * (the server's body limit, for the whole form); a part is a file when it has a filename.
 */
import type { FastifyRequest } from 'fastify';
import { invalidRequest } from '../../http/errors.js';
import { MAX_JSON_DEPTH } from '../../http/json-depth.js';
import { readForm, type FormLimits } from '../kit/multipart.js';

/** A file part of the form (not kept: the Vid-H3 upstream takes image URLs only). */
export class UploadedFile {
  constructor(
    readonly filename: string,
    readonly contentType: string,
    readonly size: number,
  ) {}
}

/** A part declared `application/json` brings its JSON value (numbers, booleans and null among them). */
type FormValue = string | number | boolean | null | UploadedFile | FormValue[] | { [key: string]: FormValue };

/** The body's top-level fields that are lists of text (the first and last frame). */
const LIST_FIELDS = ['images'] as const;

/** `metadata[content][0][type]` → ['metadata', 'content', '0', 'type']; `images[]` → ['images', '']. */
function pathOf(key: string): string[] | undefined {
  const match = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(key);
  if (!match) return undefined;
  const rest = [...(match[2] ?? '').matchAll(/\[([^[\]]*)\]/g)].map((m) => m[1] ?? '');
  return [match[1] ?? key, ...rest];
}

const isSafeKey = (key: string) => key !== '__proto__' && key !== 'constructor' && key !== 'prototype';

/** Places `value` at `path`; numeric segments under an array index it, `[]` appends. */
function assign(target: Record<string, FormValue> | FormValue[], path: readonly string[], value: FormValue): void {
  const [head, ...rest] = path;
  if (head === undefined || !isSafeKey(head)) return;
  const container = target as Record<string, FormValue>;
  if (Array.isArray(target) && head === '') {
    if (rest.length === 0) target.push(value);
    else {
      const child: Record<string, FormValue> | FormValue[] = rest[0] === '' || /^\d+$/.test(rest[0] ?? '') ? [] : {};
      target.push(child);
      assign(child, rest, value);
    }
    return;
  }
  if (rest.length === 0) {
    container[head] = value;
    return;
  }
  const wantsArray = rest[0] === '' || /^\d+$/.test(rest[0] ?? '');
  let child = container[head];
  if (child === undefined || child === null || typeof child !== 'object' || child instanceof UploadedFile) {
    child = wantsArray ? [] : {};
    container[head] = child;
  }
  assign(child, rest, value);
}

/** The limits of a buffered body, which a form had before: only its total size is bounded. */
function formLimits(bodyLimit: number): FormLimits {
  return { files: Infinity, fileBytes: bodyLimit, fields: Infinity, fieldBytes: bodyLimit, parts: Infinity, bodyBytes: bodyLimit };
}

/** The request's form in the shape of a JSON body. */
export async function readVidH3Form(request: FastifyRequest): Promise<Record<string, FormValue>> {
  const out: Record<string, FormValue> = {};
  const options = {
    limits: formLimits(request.routeOptions.bodyLimit),
    isFile: (_field: unknown, _type: unknown, filename: string | undefined) => filename !== undefined,
  };
  await readForm(request, options, async (part) => {
    const path = pathOf(part.name);
    if (!path) return;
    // The same bound as JSON bodies: the decoded form is walked recursively later.
    if (path.length > MAX_JSON_DEPTH) throw invalidRequest(part.name.slice(0, 64), `form key nested deeper than ${MAX_JSON_DEPTH} levels`);
    const value =
      part.kind === 'file' ? new UploadedFile(part.filename, part.contentType, await part.size()) : 'json' in part ? (part.json as FormValue) : part.value;
    const listed = path.length === 1 ? LIST_FIELDS.find((name) => name === path[0]) : undefined;
    // A list field's plain key repeated is the list, a part an item (as OpenAPI sends an array of text in a form).
    if (listed) out[listed] = out[listed] === undefined ? value : [...(Array.isArray(out[listed]) ? out[listed] : [out[listed]]), value];
    else assign(out, path, value);
  });
  // A list field sent as one plain part is a list of one: a form cannot tell one item from a value.
  for (const name of LIST_FIELDS) if (typeof out[name] === 'string') out[name] = [out[name]];
  return out;
}
