/**
 * `multipart/form-data` bodies of `POST /v1/images/edits` (spec 4.8), turned into the JSON
 * body the rules read: files under `image`, `image[]` or `image[n]` (30 MiB each, repeated
 * for several) become `data:image/<format>;base64,…` references (`image[n]` in the order of n,
 * the others after them in the order sent; text values there are URLs); every other
 * field appears once; `n`, `seed`, `guidance_scale` are read as numbers, `stream`, `watermark`,
 * `optimize_prompt`, `layer_decomposition` as `true`/`false`, and `optimize_prompt_options`,
 * `sequential_image_generation_options`, `tools` as JSON. A value that does not read as its
 * type stays a string, so the rules refuse it naming the field. Parsing: @fastify/multipart;
 * a form it cannot read (no boundary, truncated) is a 400 naming `body`, never a 500.
 */
import type {} from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { sniffContentType } from '../../engine/assets.js';
import { GatewayError, invalidRequest, normalizeError } from '../../http/errors.js';
import { nestsDeeperThan, MAX_JSON_DEPTH } from '../../http/json-depth.js';
import { MAX_REFERENCE_BYTES } from './request.js';

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

function errorCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null || !('code' in err)) return undefined;
  return typeof err.code === 'string' ? err.code : undefined;
}

function limitError(err: unknown): GatewayError | undefined {
  switch (errorCode(err)) {
    case 'FST_REQ_FILE_TOO_LARGE':
      return new GatewayError(413, 'request_too_large', `image: each file may be at most ${MAX_REFERENCE_BYTES} bytes (30 MiB)`, 'image');
    case 'FST_FILES_LIMIT':
      return new GatewayError(413, 'request_too_large', `image: at most ${MAX_FILES} files`, 'image');
    case 'FST_FIELDS_LIMIT':
    case 'FST_PARTS_LIMIT':
      return new GatewayError(413, 'request_too_large', 'body: too many form fields');
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return new GatewayError(415, 'unsupported_media_type', 'body: not a multipart/form-data body');
    default:
      return undefined;
  }
}

/**
 * What a failure while reading the form tells the client. Apart from our own refusals, all
 * that can fail in the loop is busboy reading the client's bytes (no boundary, a truncated
 * body, a part cut short, a malformed part header): plain Errors without a status, which are
 * the client's doing, so a 400 naming the body rather than a 500.
 */
function formError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  const limit = limitError(err);
  if (limit) return limit;
  const known = normalizeError(err);
  if (known.status < 500) return known;
  const reason = err instanceof Error && err.message ? ` (${err.message.slice(0, 120)})` : '';
  return invalidRequest('body', `the multipart form could not be parsed${reason}`);
}

export async function multipartBody(request: FastifyRequest): Promise<Record<string, unknown>> {
  const body: Record<string, unknown> = {};
  const images: Array<{ index: number; value: string }> = [];
  let listForm = false;
  const add = (slot: string | undefined, value: string): void => {
    images.push({ index: slot ? Number(slot) : Number.POSITIVE_INFINITY, value });
  };
  const limits = { fileSize: MAX_REFERENCE_BYTES, files: MAX_FILES, fields: 64, parts: 96, fieldSize: MAX_FIELD_BYTES };
  try {
    for await (const part of request.parts({ limits })) {
      const name = part.fieldname;
      const imageField = IMAGE_FIELD.exec(name);
      if (imageField?.[1] !== undefined) listForm = true;
      const where = `image.${images.length}`;
      if (part.type === 'file') {
        if (name === 'mask') throw invalidRequest('mask', 'not supported; masked edits are not available for picgen');
        if (!imageField) throw invalidRequest(name, 'only image, image[] or image[n] may carry files');
        add(imageField[1], dataUriOf(await part.toBuffer(), part.mimetype, where));
        continue;
      }
      if (part.valueTruncated) throw invalidRequest(name, `larger than ${MAX_FIELD_BYTES} bytes`);
      const text = typeof part.value === 'string' ? part.value : String(part.value);
      if (imageField) {
        add(imageField[1], text);
        continue;
      }
      if (Object.hasOwn(body, name)) throw invalidRequest(name, 'may appear only once in the form');
      Object.defineProperty(body, name, { value: fieldValue(name, text), enumerable: true, writable: true, configurable: true });
    }
  } catch (err) {
    throw formError(err);
  }
  const ordered = images.sort((a, b) => a.index - b.index).map((i) => i.value);
  if (ordered.length > 0) body.image = ordered.length === 1 && !listForm ? ordered[0] : ordered;
  return body;
}
