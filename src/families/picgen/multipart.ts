/**
 * `multipart/form-data` bodies of `POST /v1/images/edits` (spec 4.8), turned into the JSON
 * body the rules read: files under `image`, `image[]` or `image[n]` (30 MiB each, repeated
 * for several) become `data:image/<format>;base64,…` references (`image[n]` in the order of n,
 * the others after them in the order sent; text values there are URLs); every field the rules
 * read appears once (others, repeated, become an array, as OpenAPI encodes one); `n`, `seed`,
 * `guidance_scale` are read as numbers, `stream`, `watermark`, `optimize_prompt`,
 * `layer_decomposition` as `true`/`false`, and `optimize_prompt_options`,
 * `sequential_image_generation_options`, `tools` as JSON. A value that does not read as its
 * type stays a string, so the rules refuse it naming the field. A part declared
 * `application/json` (the document's encoding of `image`, `tools` and the option objects) brings
 * its JSON value. Reading the form and its refusals: the shared reader (families/kit/multipart.ts).
 */
import type { FastifyRequest } from 'fastify';
import { sniffContentType } from '../../engine/media/assets.js';
import { GatewayError, invalidRequest } from '../../http/errors.js';
import { nestsDeeperThan, MAX_JSON_DEPTH } from '../../http/json-depth.js';
import { readForm, type FormLimit, type FormLimits } from '../kit/multipart.js';
import { EDIT_FIELDS, MASK_REFUSAL, MAX_REFERENCE_BYTES } from './schema.js';

/** Files in one request: the most references any model takes. */
export const MAX_FILES = 14;
const MAX_FIELD_BYTES = 40 * 1024 * 1024;
const IMAGE_FIELD = /^image(?:\[(\d*)\])?$/;
const NUMBER_FIELDS = new Set(['n', 'seed', 'guidance_scale']);
const BOOLEAN_FIELDS = new Set(['stream', 'watermark', 'optimize_prompt', 'layer_decomposition']);
const JSON_FIELDS = new Set(['optimize_prompt_options', 'sequential_image_generation_options', 'tools']);
const NUMBER_TEXT = /^-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const IMAGE_MIME = /^image\/[a-z0-9][a-z0-9.+-]*$/;

function fieldValue(name: string, text: string): unknown {
  if (NUMBER_FIELDS.has(name)) return NUMBER_TEXT.test(text.trim()) ? Number(text.trim()) : text;
  if (BOOLEAN_FIELDS.has(name)) return text === 'true' ? true : text === 'false' ? false : text;
  if (JSON_FIELDS.has(name)) {
    if (nestsDeeperThan(text)) throw invalidRequest(name, `JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw invalidRequest(name, 'must be a JSON string in a multipart form');
    }
  }
  return text;
}

function dataUriOf(bytes: Buffer, mimetype: string, where: string): string {
  if (bytes.length === 0) throw invalidRequest(where, 'the file is empty');
  const sniffed = sniffContentType(bytes, '');
  const declared = mimetype.toLowerCase();
  const type = sniffed.startsWith('image/') ? sniffed : IMAGE_MIME.test(declared) ? declared : undefined;
  if (!type) throw invalidRequest(where, 'the file is not an image (PNG, JPEG, WebP or another image/* type)');
  return `data:${type};base64,${bytes.toString('base64')}`;
}

const FORM_LIMITS: FormLimits = { files: MAX_FILES, fileBytes: MAX_REFERENCE_BYTES, fields: 64, fieldBytes: MAX_FIELD_BYTES, parts: 96 };

/** The limits of this form refused in its own words: the files are the image references. */
function limitRefusal(limit: FormLimit): GatewayError | undefined {
  switch (limit) {
    case 'fileBytes':
      return new GatewayError(413, 'request_too_large', `image: each file may be at most ${MAX_REFERENCE_BYTES} bytes (30 MiB)`, 'image');
    case 'files':
      return new GatewayError(413, 'request_too_large', `image: at most ${MAX_FILES} files`, 'image');
    case 'fields':
    case 'parts':
      return new GatewayError(413, 'request_too_large', 'body: too many form fields');
    default:
      return undefined;
  }
}

export async function multipartBody(request: FastifyRequest): Promise<Record<string, unknown>> {
  const body: Record<string, unknown> = {};
  const images: Array<{ index: number; value: string }> = [];
  let listForm = false;
  const add = (slot: string | undefined, value: string): void => {
    images.push({ index: slot ? Number(slot) : Number.POSITIVE_INFINITY, value });
  };
  await readForm(request, { limits: FORM_LIMITS, limitRefusal }, async (part) => {
    const name = part.name;
    const imageField = IMAGE_FIELD.exec(name);
    if (imageField?.[1] !== undefined) listForm = true;
    const where = `image.${images.length}`;
    if (part.kind === 'file') {
      if (name === 'mask') throw invalidRequest('mask', MASK_REFUSAL);
      if (!imageField) throw invalidRequest(name, 'only image, image[] or image[n] may carry files');
      add(imageField[1], dataUriOf(await part.bytes(), part.contentType, where));
      return;
    }
    if (imageField) {
      // A JSON part (as the document's encoding declares `image`) holds one reference or a list of them.
      const given = 'json' in part ? part.json : part.value;
      if (Array.isArray(given)) listForm = true;
      for (const item of Array.isArray(given) ? given : [given]) add(imageField[1], typeof item === 'string' ? item : JSON.stringify(item));
      return;
    }
    const value = 'json' in part ? part.json : fieldValue(name, part.value);
    if (Object.hasOwn(body, name)) {
      // `tools[]` is `tools` for this rule: a client meaning a list is told to send one part.
      if (EDIT_FIELDS.has(name.replace(/\[.*$/, ''))) throw invalidRequest(name, 'may appear only once in the form');
      // A field the rules do not read, repeated: an array, as OpenAPI encodes one in a form (ignored all the same).
      const earlier = body[name];
      body[name] = Array.isArray(earlier) ? [...(earlier as unknown[]), value] : [earlier, value];
      return;
    }
    Object.defineProperty(body, name, { value, enumerable: true, writable: true, configurable: true });
  });
  const ordered = images.sort((a, b) => a.index - b.index).map((i) => i.value);
  if (ordered.length > 0) body.image = ordered.length === 1 && !listForm ? ordered[0] : ordered;
  return body;
}
