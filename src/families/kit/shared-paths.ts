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
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { SyncResultDoc } from '../../../projections/sync-result.js';
import type { Caller } from '../../engine/caller.js';
import { succeededCall, syncRecordFor, type SucceededSyncCall } from '../../engine/sync-record.js';
import { authenticate } from '../../http/auth/bearer.js';
import type { GatewayDeps } from '../../http/deps.js';
import { GatewayError, useErrorShape } from '../../http/errors.js';
import { isPlainObject } from './fields.js';

export const IMAGE_GENERATIONS_PATH = '/v1/images/generations';

export interface ImageGenerator {
  /** What it serves, in the route's summary (e.g. `picgen`). */
  label: string;
  /** The models it serves, named in that order when a body names none of them. */
  models: readonly string[];
  /** The path's own family: it also takes a body without a model (its rules refuse it in their words). */
  default?: boolean;
  generate(deps: GatewayDeps, request: FastifyRequest, reply: FastifyReply, caller: Caller): Promise<unknown>;
}

export interface SyncResultRoute {
  path: string;
  summary: string;
  /** Whether this call was made on this route (by its family and action). */
  made: (doc: SyncResultDoc) => boolean;
  body: (deps: GatewayDeps, call: SucceededSyncCall) => unknown;
}

/** Seconds a client is told to wait before asking again about a call still running. */
const RETRY_AFTER_SECONDS = 2;

function unknownModelMessage(generators: readonly ImageGenerator[]): string {
  const own = generators.filter((g) => g.default).flatMap((g) => g.models);
  const others = generators.filter((g) => !g.default).flatMap((g) => g.models);
  return `model: must be ${own.join(', ')}${others.length ? ` or one of ${others.join(', ')}` : ''}`;
}

export function imageGenerationsRoute(generators: readonly ImageGenerator[]) {
  return (deps: GatewayDeps): FastifyPluginAsync =>
    async (app) => {
      useErrorShape(app, 'plain');
      const summary = `Synchronous image generation (${generators.map((g) => g.label).join(', ')})`;
      app.post(IMAGE_GENERATIONS_PATH, { schema: { tags: ['images'], summary } }, async (request, reply) => {
        const caller = await authenticate(request, deps.tokens, deps.clock());
        const model = isPlainObject(request.body) ? request.body.model : undefined;
        const named = generators.find((g) => typeof model === 'string' && g.models.includes(model));
        const generator = named ?? (model === undefined || model === null ? generators.find((g) => g.default) : undefined);
        if (!generator) throw new GatewayError(400, 'invalid_request', unknownModelMessage(generators), 'model');
        return generator.generate(deps, request, reply, caller);
      });
    };
}

export function syncResultRoutes(routes: readonly SyncResultRoute[]) {
  const paths = [...new Set(routes.map((r) => r.path))];
  return (deps: GatewayDeps): FastifyPluginAsync =>
    async (app) => {
      useErrorShape(app, 'plain');
      for (const path of paths) {
        const onPath = routes.filter((r) => r.path === path);
        app.get(`${path}/:id`, { schema: { tags: ['images'], summary: onPath[0]!.summary } }, async (request, reply) => {
          const caller = await authenticate(request, deps.tokens, deps.clock());
          const { id } = request.params as { id: string };
          const doc = await syncRecordFor(deps, id, caller.accountId);
          const route = doc && onPath.find((r) => r.made(doc));
          if (!doc || !route) throw new GatewayError(404, 'task_not_exist', `id: no task ${id}`, 'id');
          reply.header('x-task-id', doc.taskId);
          if (doc.status === 'running') reply.header('retry-after', String(RETRY_AFTER_SECONDS));
          return route.body(deps, succeededCall(deps, doc));
        });
      }
    };
}
