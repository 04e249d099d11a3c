/**
 * The one way a route reads a `multipart/form-data` body: @fastify/multipart (busboy) streams
 * the parts to the family, which maps each to its own body; the limits are the route's.
 *
 * Refusals, the same for every family: a text field over its limit is a 400 naming it; a limit
 * of the form is the family's 413 (`limitRefusal`) or else the generic one naming `body`; what
 * fastify and the plugin raise keeps its client status (src/http/errors.ts); anything else is
 * busboy failing on the client's bytes (no boundary, a truncated body, a part cut short), so a
 * 400 naming `body`, never a 500.
 */
import multipart, { type MultipartFile } from '@fastify/multipart';
import { errorCodes, type FastifyInstance, type FastifyRequest } from 'fastify';
import { GatewayError, invalidRequest, normalizeError } from '../../http/errors.js';

export interface FormLimits {
  /** File parts in one form. */
  files: number;
  /** Bytes of one file. */
  fileBytes: number;
  /** Text fields in one form. */
  fields: number;
  /** Bytes of one text field. */
  fieldBytes: number;
  /** Parts of either kind in one form. */
  parts: number;
  /** Bytes of the whole body, part headers included; none: only the limits above bound it. */
  bodyBytes?: number;
}

/** Which bound a form went past. */
export type FormLimit = 'files' | 'fileBytes' | 'fields' | 'parts' | 'bodyBytes';

export interface FormOptions {
  limits: FormLimits;
  /**
   * Which parts are files, from their headers. Without it busboy's rule: a part with a
   * filename, or of type application/octet-stream.
   */
  isFile?: (field: string | undefined, contentType: string | undefined, filename: string | undefined) => boolean;
  /** The family's own refusal of a limit; undefined: the generic 413 naming `body`. */
  limitRefusal?: (limit: FormLimit) => GatewayError | undefined;
}

export interface FormField {
  readonly kind: 'field';
  readonly name: string;
  readonly value: string;
  /** The parsed value of a part declared `application/json` (as OpenAPI encodes an object property of a form). */
  readonly json?: unknown;
}

export interface FormFile {
  readonly kind: 'file';
  readonly name: string;
  readonly filename: string;
  readonly contentType: string;
  /** The whole file in memory (at most `fileBytes`). */
  bytes(): Promise<Buffer>;
  /** Reads the file to its end without keeping it; its size in bytes. */
  size(): Promise<number>;
}

export type FormPart = FormField | FormFile;

/**
 * Lets the routes of this (encapsulated) plugin read forms. An enclosing scope that registered
 * @fastify/multipart already serves (a second registration there would be refused, sibling
 * scopes each have their own); another form parser inherited from outside is replaced.
 */
export async function acceptMultipart(app: FastifyInstance): Promise<void> {
  if (app.hasRequestDecorator('parts')) return;
  if (app.hasContentTypeParser('multipart/form-data')) app.removeContentTypeParser('multipart/form-data');
  // No options: every read passes all of its limits (they override the plugin's defaults).
  await app.register(multipart);
}

/**
 * Accepts forms as above. The route's `preValidation` hook it returns makes the form, decoded by
 * `decode`, the request's body before validation, as a parsed JSON body is, so the schema and
 * the rules judge either alike; a form is read only once its key is accepted (route-config.ts).
 */
export async function acceptForms(
  app: FastifyInstance,
  decode: (request: FastifyRequest) => Promise<unknown>,
): Promise<(request: FastifyRequest) => Promise<void>> {
  await acceptMultipart(app);
  return async (request) => {
    if (request.isMultipart()) request.body = await decode(request);
  };
}

const LIMIT_OF_CODE: Readonly<Record<string, FormLimit>> = {
  FST_FILES_LIMIT: 'files',
  FST_REQ_FILE_TOO_LARGE: 'fileBytes',
  FST_FIELDS_LIMIT: 'fields',
  FST_PARTS_LIMIT: 'parts',
  FST_ERR_CTP_BODY_TOO_LARGE: 'bodyBytes',
};

function codeOf(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null || !('code' in err)) return undefined;
  return typeof err.code === 'string' ? err.code : undefined;
}

/** What a failure while reading the form tells the client (see the file's comment). */
function refusalOf(err: unknown, options: FormOptions): GatewayError {
  if (err instanceof GatewayError) return err;
  const code = codeOf(err);
  const limit = code === undefined ? undefined : LIMIT_OF_CODE[code];
  const own = limit && options.limitRefusal?.(limit);
  if (own) return own;
  const known = normalizeError(err);
  if (known.status < 500) return known;
  const reason = err instanceof Error && err.message ? ` (${err.message.slice(0, 120)})` : '';
  return invalidRequest('body', `the multipart form could not be parsed${reason}`);
}

/**
 * Counts the body's bytes as they arrive, against `limits.bodyBytes`. Attached in the same
 * tick as the parser is piped, so both see every chunk.
 */
function bodyMeter(request: FastifyRequest, limit: number | undefined) {
  let received = 0;
  const count = (chunk: Buffer): void => {
    received += chunk.length;
  };
  const declared = Number(request.headers['content-length']);
  return {
    start(): void {
      if (limit !== undefined) request.raw.on('data', count);
    },
    stop(): void {
      request.raw.off('data', count);
    },
    /** Throws fastify's own body-too-large error, the one a buffered body would have had. */
    check(): void {
      if (limit !== undefined && (received > limit || declared > limit)) throw new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE();
    },
  };
}

function fileOf(request: FastifyRequest, part: MultipartFile, meter: ReturnType<typeof bodyMeter>) {
  let consumed = false;
  const file: FormFile = {
    kind: 'file',
    name: part.fieldname,
    filename: part.filename,
    contentType: part.mimetype,
    bytes: async () => {
      consumed = true;
      const bytes = await part.toBuffer();
      meter.check();
      return bytes;
    },
    size: async () => {
      consumed = true;
      let size = 0;
      for await (const chunk of part.file as AsyncIterable<Buffer>) {
        size += chunk.length;
        meter.check();
      }
      // busboy stops the file at its limit and only flags it: refuse it as toBuffer() does.
      if (part.file.truncated) throw new request.server.multipartErrors.RequestFileTooLargeError();
      return size;
    },
  };
  return { file, consumed: () => consumed };
}

/**
 * Hands each part of the request's form to `onPart`, in order; a file `onPart` leaves unread
 * is read to its end (busboy waits for it). Whatever fails becomes the GatewayError to answer.
 */
export async function readForm(request: FastifyRequest, options: FormOptions, onPart: (part: FormPart) => void | Promise<void>): Promise<void> {
  const { limits } = options;
  const meter = bodyMeter(request, limits.bodyBytes);
  try {
    meter.check();
    const parts = request.parts({
      limits: { files: limits.files, fileSize: limits.fileBytes, fields: limits.fields, fieldSize: limits.fieldBytes, parts: limits.parts },
      ...(options.isFile ? { isPartAFile: options.isFile } : {}),
    });
    // The parser is piped on the first step of the loop below, in this same tick.
    meter.start();
    for await (const part of parts) {
      meter.check();
      if (part.type === 'file') {
        const { file, consumed } = fileOf(request, part, meter);
        await onPart(file);
        if (!consumed()) await file.size();
        continue;
      }
      if (part.valueTruncated) throw invalidRequest(part.fieldname, `larger than ${limits.fieldBytes} bytes`);
      // A part declared application/json arrives parsed: the family gets its text and the parsed value.
      const declaredJson = part.mimetype === 'application/json';
      const value = declaredJson ? JSON.stringify(part.value) : String(part.value);
      await onPart(declaredJson ? { kind: 'field', name: part.fieldname, value, json: part.value } : { kind: 'field', name: part.fieldname, value });
    }
    meter.check();
  } catch (err) {
    throw refusalOf(err, options);
  } finally {
    meter.stop();
  }
}
