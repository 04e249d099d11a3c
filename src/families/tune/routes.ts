/**
 * `POST /tune/submit/LYRICS`, `POST /tune/submit/MUSIC` and `GET /tune/fetch/{task_id}`
 * (spec 2.6, 4.11). Submit answers `{code: "success", message, data: "task_…"}`; every refusal
 * `{code: "invalid_request", reason, message, error}` (the `submit` error shape); a missing or
 * another account's task is HTTP 400 `task_not_exist`, like the async image query.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { submitIdempotently } from '../../engine/idempotency.js';
import { submitTask } from '../../engine/submit.js';
import { assertModelAllowed, authenticate } from '../../http/auth/bearer.js';
import type { GatewayDeps } from '../../http/deps.js';
import { GatewayError, useErrorShape } from '../../http/errors.js';
import { metadataFor } from '../../http/request-meta.js';
import { taskViewFor } from '../../http/task-views.js';
import { TUNE_FAMILY, tuneTaskProjection } from '../../../projections/tune-task.js';
import { planLyricsRequest } from './lyrics-request.js';
import { planMusicRequest } from './music-request.js';
import type { TunePlanResult } from './plan.js';
import type { UrlFieldSpec } from '../url-fields.js';
import { enforceUrlPolicyOn } from '../url-policy.js';

const SUBMITTED_MESSAGE = 'submitted; poll GET /tune/fetch/{task_id}';

/** The callback address of each submit, for the URL policy (the only URL fields of tune). */
const LYRICS_URL_FIELDS: readonly UrlFieldSpec[] = [{ path: 'hookUrl', use: 'callback' }];
const MUSIC_URL_FIELDS: readonly UrlFieldSpec[] = [{ path: 'callback_url', use: 'callback' }];

function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const key = request.headers['idempotency-key'];
  return Array.isArray(key) ? key[0] : key;
}

async function submit(deps: GatewayDeps, request: FastifyRequest, planned: TunePlanResult, urlFields: readonly UrlFieldSpec[]) {
  const caller = await authenticate(request, deps.tokens, deps.clock());
  if (!planned.ok) throw new GatewayError(400, 'invalid_request', planned.message, planned.param);
  const { plan } = planned;
  assertModelAllowed(caller, plan.model, deps.catalog);
  await enforceUrlPolicyOn(deps, request.body, urlFields);
  const idempotencyKey = idempotencyKeyOf(request);
  const metadata = metadataFor(request, deps.clock());
  const outcome = await submitIdempotently(deps, { key: idempotencyKey, tokenId: caller.tokenId, body: { action: plan.action, body: request.body }, metadata }, (ids) =>
    submitTask(deps, {
      family: TUNE_FAMILY,
      channelFamily: 'tune',
      action: plan.action,
      model: plan.model,
      caller,
      request: plan.upstream,
      units: plan.units,
      ...ids,
      ...(plan.callbackUrl ? { callbackUrl: plan.callbackUrl } : {}),
      metadata,
    }),
  );
  return { code: 'success', message: SUBMITTED_MESSAGE, data: outcome.task.taskId };
}

export function tuneRoutes(deps: GatewayDeps): FastifyPluginAsync {
  return async (app) => {
    useErrorShape(app, 'plain');

    // A context of its own: every refusal of a submit answers `code` = `invalid_request`
    // (spec 7), while the query keeps its codes (`task_not_exist`).
    await app.register(async (submitScope) => {
      useErrorShape(submitScope, 'submit');
      submitScope.post('/tune/submit/LYRICS', { schema: { tags: ['tune'], summary: 'Submit a lyrics task (billed as tune_lyrics)' } }, async (request) =>
        submit(deps, request, planLyricsRequest(request.body), LYRICS_URL_FIELDS),
      );
      submitScope.post('/tune/submit/MUSIC', { schema: { tags: ['tune'], summary: 'Submit a song task (billed as tune_music)' } }, async (request) =>
        submit(deps, request, planMusicRequest(request.body), MUSIC_URL_FIELDS),
      );
    });

    app.get('/tune/fetch/:task_id', { schema: { tags: ['tune'], summary: 'Query a lyrics or song task' } }, async (request) => {
      const caller = await authenticate(request, deps.tokens, deps.clock());
      const { task_id } = request.params as { task_id: string };
      const doc = await taskViewFor(deps, tuneTaskProjection, task_id, caller.accountId);
      if (!doc) throw new GatewayError(400, 'task_not_exist', `task_id: no task ${task_id}`, 'task_id');
      return doc.body;
    });
  };
}
