/**
 * Paths that more than one family serves, dispatched here so that no family imports another:
 *
 * - `POST /v1/images/generations` answers std-image / pro-image (sync-images, the path's own
 *   family: a body without a model goes there and is refused in its words) and the synchronous
 *   picgen models (picgen). Each family contributes an `ImageGenerator`.
 * - `GET <path>/{id}`, the result of a synchronous call by its `x-task-id`: each family
 *   contributes the `SyncResultRoute`s of the calls it makes; one path may carry several.
 *
 * The family index (src/families/index.ts) collects the contributions and registers each path once.
 * Each path's declared contract is made of theirs: the generations body is a union discriminated
 * on `model`, so a body is checked by the schema of the family that will read it (and refused in
 * that family's words); the answers are the union of the families' answers.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { SyncResultDoc } from '../../../projections/sync-result.js';
import { succeededCall, syncRecordFor, type SucceededSyncCall } from '../../engine/tasks/sync-record.js';
import type { GatewayDeps } from '../../http/deps.js';
import { GatewayError } from '../../http/errors.js';
import type { RouteConfig } from '../../http/route-config.js';
import { isPlainObject } from './fields.js';
import { documentedAs, jsonBody, submitHeaders } from './schema.js';

export const IMAGE_GENERATIONS_PATH = '/v1/images/generations';

export interface ImageGenerator {
  /** What it serves, in the route's summary (e.g. `picgen`). */
  label: string;
  /** The models it serves, named in that order when a body names none of them. */
  models: readonly string[];
  /** The path's own family: it also takes a body without a model (its rules refuse it in their words). */
  default?: boolean;
  /**
   * Its request body: a JSON object whose `model` is one of `models` (or a union on `model` of
   * such objects), refusing in the words of its rules. Without one only the model is checked
   * before `generate`. The default generator's is an object.
   */
  body?: z.ZodObject | z.ZodDiscriminatedUnion<z.ZodObject[]>;
  /** Its answer (200); without one the path declares none. */
  answer?: z.ZodType;
  /** What the path's description says of it beyond the answer (e.g. a streamed answer). */
  description?: string;
  /** It answers `text/event-stream` when the body asks for a stream (the document says so). */
  streams?: boolean;
  /** Runs the call and answers it (sync-call.ts, which authenticates the caller). */
  generate(deps: GatewayDeps, request: FastifyRequest, reply: FastifyReply): Promise<unknown>;
}

export interface SyncResultRoute {
  path: string;
  summary: string;
  /** Whether this call was made on this route (by its family and action). */
  made: (doc: SyncResultDoc) => boolean;
  body: (deps: GatewayDeps, call: SucceededSyncCall) => unknown;
  /** What `body` answers (200); without one the path declares none. */
  answer?: z.ZodType;
}

/** Seconds a client is told to wait before asking again about a call still running. */
const RETRY_AFTER_SECONDS = 2;

function unknownModelReason(generators: readonly ImageGenerator[]): string {
  const own = generators.filter((g) => g.default).flatMap((g) => g.models);
  const others = generators.filter((g) => !g.default).flatMap((g) => g.models);
  return `must be ${own.join(', ')}${others.length ? ` or one of ${others.join(', ')}` : ''}`;
}

/** One schema for several: their union, or the one; none when any is missing. */
function unionOf(schemas: ReadonlyArray<z.ZodType | undefined>): z.ZodType | undefined {
  if (schemas.some((s) => s === undefined)) return undefined;
  const [first, second, ...rest] = schemas.filter((s): s is z.ZodType => s !== undefined);
  if (!first || !second) return first;
  return z.union([first, second, ...rest]);
}

/** A generator's body as an option of the path's union, which picks it by `model`. */
function optionOf(generator: ImageGenerator): z.ZodObject | z.ZodDiscriminatedUnion<z.ZodObject[]> {
  const models = z.enum(generator.models);
  const body = generator.body ?? jsonBody({ model: models });
  if (!generator.default || !(body instanceof z.ZodObject)) return body;
  // A body without a model is the default generator's: its own model schema refuses it, in its
  // words. Only its models or none reach that schema (hence the narrower input type).
  const declared: unknown = body.shape.model;
  const own = declared instanceof z.ZodType ? (declared as z.ZodType<unknown, string | null | undefined>) : models;
  const description = [own.description, `required: a body without a model is refused by the ${generator.label} rules`].filter(Boolean).join('; ');
  // The document says what those rules do: `model` is required and not null (its own schema's
  // document, not that of the wider input the union routes here).
  const extended = body.extend({
    model: models
      .nullish()
      .pipe(own)
      .meta({ ...documentedAs(own), nullable: false, description }),
  });
  const required = documentedAs(extended).required;
  return extended.meta({ required: [...new Set(['model', ...(Array.isArray(required) ? (required as string[]) : [])])] });
}

/**
 * The body of the generations path: each generator's own body, chosen by `model`, so a body is
 * checked (and refused) as the family that reads it would; a model no generator serves is refused
 * naming every model, a body that is not an object as every family refuses it.
 */
function generationsBody(generators: readonly ImageGenerator[]) {
  const [first, ...rest] = generators.map(optionOf);
  if (!first) return undefined;
  const unknownModel = unknownModelReason(generators);
  return z.discriminatedUnion('model', [first, ...rest], {
    error: (issue) => (issue.code === 'invalid_union' ? unknownModel : 'must be a JSON object'),
  });
}

export function imageGenerationsRoute(generators: readonly ImageGenerator[]) {
  const body = generationsBody(generators);
  const answer = unionOf(generators.map((g) => g.answer));
  const summary = `Synchronous image generation (${generators.map((g) => g.label).join(', ')})`;
  const description = [
    'A synchronous call: the answer carries the images. Its task id is the `x-task-id` response header: `GET /v1/images/generations/{id}` answers the result again, and a retry with the same `Idempotency-Key` and body answers the same result without charging again.',
    ...generators.flatMap((g) => (g.description ? [g.description] : [])),
  ].join('\n\n');
  return (deps: GatewayDeps): FastifyPluginAsyncZod =>
    async (app) => {
      const streams = generators.some((g) => g.streams);
      const config: RouteConfig = { auth: 'bearer', errorShape: 'plain', ...(streams ? { eventStream: 'when-asked' as const } : {}) };
      const schema = {
        tags: ['images'],
        summary,
        description,
        headers: submitHeaders,
        ...(body ? { body } : {}),
        ...(answer ? { response: { 200: answer } } : {}),
      };
      app.post(IMAGE_GENERATIONS_PATH, { config, schema }, async (request, reply) => {
        const model = isPlainObject(request.body) ? request.body.model : undefined;
        const named = generators.find((g) => typeof model === 'string' && g.models.includes(model));
        const generator = named ?? (model === undefined || model === null ? generators.find((g) => g.default) : undefined);
        if (!generator) throw new GatewayError(400, 'invalid_request', `model: ${unknownModelReason(generators)}`, 'model');
        return generator.generate(deps, request, reply);
      });
    };
}

const resultParams = z.object({ id: z.string().meta({ description: 'the task id of the call, from its x-task-id header' }) });

export function syncResultRoutes(routes: readonly SyncResultRoute[]) {
  const paths = [...new Set(routes.map((r) => r.path))];
  return (deps: GatewayDeps): FastifyPluginAsyncZod =>
    async (app) => {
      const config = { auth: 'bearer', errorShape: 'plain' } as const;
      for (const path of paths) {
        const onPath = routes.filter((r) => r.path === path);
        const answer = unionOf(onPath.map((r) => r.answer));
        const schema = { tags: ['images'], summary: onPath[0]!.summary, params: resultParams, ...(answer ? { response: { 200: answer } } : {}) };
        app.get(`${path}/:id`, { config, schema }, async (request, reply) => {
          const { id } = request.params;
          const doc = await syncRecordFor(deps, id, request.caller.accountId);
          const route = doc && onPath.find((r) => r.made(doc));
          if (!doc || !route) throw new GatewayError(404, 'task_not_exist', `id: no task ${id}`, 'id');
          reply.header('x-task-id', doc.taskId);
          if (doc.status === 'running') reply.header('retry-after', String(RETRY_AFTER_SECONDS));
          return route.body(deps, succeededCall(deps, doc));
        });
      }
    };
}
