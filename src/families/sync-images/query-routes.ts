/**
 * The result of a synchronous call, by the task id its answer carried (`x-task-id`; a chat
 * completion's `id`), for the owner's account while its files are kept:
 *
 *   GET /v1/images/generations/{id}   std-image / pro-image / picgen generations
 *   GET /v1/images/edits/{id}         picgen edits
 *   GET /v1/chat/completions/{id}     chat-style calls
 *
 * Each answers the body the call answered (a streamed call: the plain body of its route), or
 * the error the call answered. Another account's id, or a call of another route, is 404 like a
 * missing one; a call still running 409 `task_in_progress` (with Retry-After); a call whose
 * files are deleted 410 `result_expired`.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { SyncResultDoc } from '../../../projections/sync-result.js';
import { succeededCall, syncRecordFor, type SucceededSyncCall } from '../../engine/sync-record.js';
import { authenticate } from '../../http/auth/bearer.js';
import type { GatewayDeps } from '../../http/deps.js';
import { GatewayError, useErrorShape } from '../../http/errors.js';
import { picgenBody } from '../picgen/answer.js';
import { PICGEN_SYNC_FAMILY } from '../picgen/routes.js';
import { PICGEN_EDITS_PATH } from '../picgen/upstream.js';
import { chatBody, imagesBody, SYNC_IMAGE_FAMILY } from './answers.js';
import { CHAT_PATH, IMAGES_PATH } from './upstream.js';

/** Seconds a client is told to wait before asking again about a call still running. */
const RETRY_AFTER_SECONDS = 2;

interface QueryRoute {
  path: string;
  summary: string;
  /** Whether a call of this family and action was made on this route. */
  made: (doc: SyncResultDoc) => boolean;
  body: (deps: GatewayDeps, call: SucceededSyncCall) => unknown;
}

const QUERY_ROUTES: readonly QueryRoute[] = [
  {
    path: IMAGES_PATH,
    summary: 'The result of a synchronous image generation, by the id in its x-task-id header',
    made: (d) => (d.family === SYNC_IMAGE_FAMILY && d.action === 'images/generate') || (d.family === PICGEN_SYNC_FAMILY && d.action === 'generate'),
    body: (deps, call) => (call.family === PICGEN_SYNC_FAMILY ? picgenBody(deps, call) : imagesBody(deps, call)),
  },
  {
    path: PICGEN_EDITS_PATH,
    summary: 'The result of a synchronous picgen edit, by the id in its x-task-id header',
    made: (d) => d.family === PICGEN_SYNC_FAMILY && (d.action === 'edit' || d.action === 'layers'),
    body: picgenBody,
  },
  {
    path: CHAT_PATH,
    summary: 'The result of a synchronous chat-style image call, by its id',
    made: (d) => d.family === SYNC_IMAGE_FAMILY && d.action.startsWith('chat/'),
    body: (_deps, call) => chatBody(call),
  },
];

export function syncQueryRoutes(deps: GatewayDeps): FastifyPluginAsync {
  return async (app) => {
    useErrorShape(app, 'plain');

    for (const route of QUERY_ROUTES) {
      app.get(`${route.path}/:id`, { schema: { tags: ['images'], summary: route.summary } }, async (request, reply) => {
        const caller = await authenticate(request, deps.tokens, deps.clock());
        const { id } = request.params as { id: string };
        const doc = await syncRecordFor(deps, id, caller.accountId);
        if (!doc || !route.made(doc)) throw new GatewayError(404, 'task_not_exist', `id: no task ${id}`, 'id');
        reply.header('x-task-id', doc.taskId);
        if (doc.status === 'running') reply.header('retry-after', String(RETRY_AFTER_SECONDS));
        return route.body(deps, succeededCall(deps, doc));
      });
    }
  };
}
