/**
 * `POST /tune/submit/LYRICS`, `POST /tune/submit/MUSIC` and `GET /tune/fetch/{task_id}`
 * (spec 2.6, 4.11). Submit answers `{code: "success", message, data: "task_…"}`; every refusal
 * `{code: "invalid_request", reason, message, error}` (the `submit` error shape); a missing or
 * another account's task is HTTP 400 `task_not_exist`, like the async image query.
 */
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { GatewayDeps } from '../../http/deps.js';
import { TUNE_FAMILY, tuneTaskProjection } from './view.js';
import { findOwnTask, taskNotExist } from '../kit/query.js';
import { submitHeaders, taskIdParams } from '../kit/schema.js';
import { submitFamilyTask } from '../kit/submit.js';
import type { UrlFieldSpec } from '../kit/url-fields.js';
import { planLyrics } from './lyrics-request.js';
import { planMusic } from './music-request.js';
import type { TunePlanResult } from './plan.js';
import { LyricsBody, MusicBody, SubmitAnswer, TaskAnswer } from './schema.js';

const SUBMITTED_MESSAGE = 'submitted; poll GET /tune/fetch/{task_id}';

/** The callback address of each submit, for the URL policy (the only URL fields of tune). */
const LYRICS_URL_FIELDS: readonly UrlFieldSpec[] = [{ path: 'hookUrl', use: 'callback' }];
const MUSIC_URL_FIELDS: readonly UrlFieldSpec[] = [{ path: 'callback_url', use: 'callback' }];

async function submit(deps: GatewayDeps, request: FastifyRequest, plan: () => TunePlanResult, urlFields: readonly UrlFieldSpec[]) {
  const { task } = await submitFamilyTask(deps, request, {
    family: TUNE_FAMILY,
    channelFamily: 'tune',
    plan,
    urlFields,
    // Both routes record one family: a key is matched on the route's action too.
    idempotencyBody: (body, p) => ({ action: p.action, body }),
  });
  return { code: 'success' as const, message: SUBMITTED_MESSAGE, data: task.taskId };
}

export function tuneRoutes(deps: GatewayDeps): FastifyPluginAsyncZod {
  return async (app) => {
    const config = { auth: 'bearer', errorShape: 'plain' } as const;
    // Every refusal of a submit answers `code` = `invalid_request` (spec 7), while the query keeps
    // its codes (`task_not_exist`).
    const submitConfig = { auth: 'bearer', errorShape: 'submit' } as const;
    const submitSchema = <B extends typeof LyricsBody | typeof MusicBody>(summary: string, body: B) => ({
      tags: ['tune'],
      summary,
      headers: submitHeaders,
      body,
      response: { 200: SubmitAnswer },
    });
    app.post(
      '/tune/submit/LYRICS',
      { config: submitConfig, schema: submitSchema('Submit a lyrics task (billed as tune_lyrics)', LyricsBody) },
      async (request) => submit(deps, request, () => planLyrics(request.body), LYRICS_URL_FIELDS),
    );
    app.post('/tune/submit/MUSIC', { config: submitConfig, schema: submitSchema('Submit a song task (billed as tune_music)', MusicBody) }, async (request) =>
      submit(deps, request, () => planMusic(request.body), MUSIC_URL_FIELDS),
    );

    app.get(
      '/tune/fetch/:task_id',
      { config, schema: { tags: ['tune'], summary: 'Query a lyrics or song task', params: taskIdParams, response: { 200: TaskAnswer } } },
      async (request) => (await findOwnTask(deps, request, tuneTaskProjection, taskNotExist(400))).body,
    );
  };
}
