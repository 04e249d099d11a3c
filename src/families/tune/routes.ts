/**
 * `POST /tune/submit/LYRICS`, `POST /tune/submit/MUSIC` and `GET /tune/fetch/{task_id}`
 * (spec 2.6, 4.11). Submit answers `{code: "success", message, data: "task_…"}`; every refusal
 * `{code: "invalid_request", reason, message, error}` (the `submit` error shape); a missing or
 * another account's task is HTTP 400 `task_not_exist`, like the async image query.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { GatewayDeps } from '../../http/deps.js';
import { useErrorShape } from '../../http/errors.js';
import { TUNE_FAMILY, tuneTaskProjection } from '../../../projections/tune-task.js';
import { findOwnTask, taskNotExist } from '../kit/query.js';
import { submitFamilyTask } from '../kit/submit.js';
import type { UrlFieldSpec } from '../kit/url-fields.js';
import { planLyricsRequest } from './lyrics-request.js';
import { planMusicRequest } from './music-request.js';
import type { TunePlanResult } from './plan.js';

const SUBMITTED_MESSAGE = 'submitted; poll GET /tune/fetch/{task_id}';

/** The callback address of each submit, for the URL policy (the only URL fields of tune). */
const LYRICS_URL_FIELDS: readonly UrlFieldSpec[] = [{ path: 'hookUrl', use: 'callback' }];
const MUSIC_URL_FIELDS: readonly UrlFieldSpec[] = [{ path: 'callback_url', use: 'callback' }];

async function submit(deps: GatewayDeps, request: FastifyRequest, plan: (body: unknown) => TunePlanResult, urlFields: readonly UrlFieldSpec[]) {
  const { task } = await submitFamilyTask(deps, request, {
    family: TUNE_FAMILY,
    channelFamily: 'tune',
    plan,
    urlFields,
    // Both routes record one family: a key is matched on the route's action too.
    idempotencyBody: (body, p) => ({ action: p.action, body }),
  });
  return { code: 'success', message: SUBMITTED_MESSAGE, data: task.taskId };
}

export function tuneRoutes(deps: GatewayDeps): FastifyPluginAsync {
  return async (app) => {
    useErrorShape(app, 'plain');

    // A context of its own: every refusal of a submit answers `code` = `invalid_request`
    // (spec 7), while the query keeps its codes (`task_not_exist`).
    await app.register(async (submitScope) => {
      useErrorShape(submitScope, 'submit');
      submitScope.post('/tune/submit/LYRICS', { schema: { tags: ['tune'], summary: 'Submit a lyrics task (billed as tune_lyrics)' } }, async (request) =>
        submit(deps, request, planLyricsRequest, LYRICS_URL_FIELDS),
      );
      submitScope.post('/tune/submit/MUSIC', { schema: { tags: ['tune'], summary: 'Submit a song task (billed as tune_music)' } }, async (request) =>
        submit(deps, request, planMusicRequest, MUSIC_URL_FIELDS),
      );
    });

    app.get('/tune/fetch/:task_id', { schema: { tags: ['tune'], summary: 'Query a lyrics or song task' } }, async (request) => {
      const doc = await findOwnTask(deps, request, tuneTaskProjection, taskNotExist(400));
      return doc.body;
    });
  };
}
