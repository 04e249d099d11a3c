/**
 * `multipart/form-data` bodies for `POST /v1/videos`: the official `openai` client's
 * `videos.create` always sends a form, nesting objects as `key[name]` and arrays as `key[]`
 * (openai/internal/uploads.js). The form is decoded into the same shape a JSON body has, so one
 * set of rules serves both; every value stays a string (the rules accept numeric strings), and
 * an uploaded file becomes an `UploadedFile`, which the rules refuse where a URL is expected.
 * Parsing uses the WHATWG `Response.formData()` built into Node, so no extra dependency.
 */
import type { FastifyInstance } from 'fastify';
import { GatewayError, invalidRequest } from '../../http/errors.js';
import { MAX_JSON_DEPTH } from '../../http/json-depth.js';

/** A file part of the form (not kept: the Vid-H3 upstream takes image URLs only). */
export class UploadedFile {
  constructor(
    readonly filename: string,
    readonly contentType: string,
    readonly size: number,
  ) {}
}

type FormValue = string | UploadedFile | FormValue[] | { [key: string]: FormValue };

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
  if (child === undefined || typeof child === 'string' || child instanceof UploadedFile) {
    child = wantsArray ? [] : {};
    container[head] = child;
  }
  assign(child, rest, value);
}

export async function decodeForm(bytes: Buffer, contentType: string): Promise<Record<string, FormValue>> {
  const form = await new Response(bytes, { headers: { 'content-type': contentType } }).formData();
  const out: Record<string, FormValue> = {};
  for (const [key, entry] of form) {
    const path = pathOf(key);
    if (!path) continue;
    // The same bound as JSON bodies: the decoded form is walked recursively later.
    if (path.length > MAX_JSON_DEPTH) throw invalidRequest(key.slice(0, 64), `form key nested deeper than ${MAX_JSON_DEPTH} levels`);
    const value = typeof entry === 'string' ? entry : new UploadedFile(entry.name, entry.type, entry.size);
    assign(out, path, value);
  }
  return out;
}

/**
 * Accepts `multipart/form-data` in this (encapsulated) plugin only; a broken form is a 400. A
 * form parser inherited from an outer context (e.g. a multipart plugin registered for other
 * routes) is replaced here, so these routes always get the decoded body.
 */
export function acceptForms(app: FastifyInstance): void {
  if (app.hasContentTypeParser('multipart/form-data')) app.removeContentTypeParser('multipart/form-data');
  app.addContentTypeParser('multipart/form-data', { parseAs: 'buffer' }, async (request: { headers: Record<string, unknown> }, body: Buffer) => {
    try {
      return await decodeForm(body, String(request.headers['content-type']));
    } catch (err) {
      // Anything but our own refusal is the WHATWG parser failing on the client's bytes.
      if (err instanceof GatewayError) throw err;
      throw invalidRequest('body', 'the multipart form could not be parsed (missing boundary, truncated or malformed)');
    }
  });
}
