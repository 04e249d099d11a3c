/**
 * `POST /v1/videos`, `GET /v1/videos` (the account's videos, OpenAI's cursor list), `GET /v1/videos/{task_id}` and `GET /v1/videos/{task_id}/content`
 * (spec 4.13): OpenAI's video endpoints, so its client works against them. The submit takes JSON
 * or the client's multipart form; the content endpoint streams the MP4 with range support.
 */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { GatewayDeps } from '../../http/deps.js';
import { GatewayError } from '../../http/errors.js';
import { sendAsset } from '../../http/send-asset.js';
import { listVidH3Videos, submittedVidH3Body, VID_H3_FAMILY, vidH3VideoProjection } from './view.js';
import { findOwnTask, taskNotExist } from '../kit/query.js';
import { submitHeaders, taskIdParams } from '../kit/schema.js';
import { submitFamilyTask } from '../kit/submit.js';
import { acceptForms } from '../kit/multipart.js';
import { readVidH3Form } from './multipart.js';
import { planVidH3, VID_H3_URL_FIELDS } from './request.js';
import { ContentAnswers, ContentQuery, ListAnswer, ListQuery, SubmitAnswer, VideoAnswer, VidH3Body } from './schema.js';

export const VID_H3_PATH = '/v1/videos';

export function vidH3Routes(deps: GatewayDeps): FastifyPluginAsyncZod {
  return async (app) => {
    const config = { auth: 'bearer', errorShape: 'openai' } as const;
    const formBody = await acceptForms(app, readVidH3Form);

    app.post(
      VID_H3_PATH,
      {
        config,
        preValidation: formBody,
        schema: {
          tags: ['video'],
          summary: 'Submit a Vid-H3 video (JSON or multipart form)',
          consumes: ['application/json', 'multipart/form-data'],
          headers: submitHeaders,
          body: VidH3Body,
          response: { 200: SubmitAnswer },
        },
      },
      async (request) => {
        const { task } = await submitFamilyTask(deps, request, {
          family: VID_H3_FAMILY,
          channelFamily: 'vid-h3',
          plan: () => planVidH3(request.body),
          urlFields: VID_H3_URL_FIELDS,
        });
        return submittedVidH3Body(task);
      },
    );

    app.get(
      VID_H3_PATH,
      {
        config,
        schema: {
          tags: ['video'],
          summary: "List the account's Vid-H3 videos (newest first by default; cursor after)",
          querystring: ListQuery,
          response: { 200: ListAnswer },
        },
      },
      async (request) => listVidH3Videos(deps.views, request.caller.accountId, request.query),
    );

    app.get(
      `${VID_H3_PATH}/:task_id`,
      { config, schema: { tags: ['video'], summary: 'Query a Vid-H3 video', params: taskIdParams, response: { 200: VideoAnswer } } },
      async (request) => (await findOwnTask(deps, request, vidH3VideoProjection, taskNotExist(404))).body,
    );

    app.get(
      `${VID_H3_PATH}/:task_id/content`,
      {
        // Not completed yet (409), expired (410), a Range beyond the file (416).
        config: { ...config, errorStatuses: [409, 410, 416] },
        schema: {
          tags: ['video'],
          summary: 'Download a completed Vid-H3 video (MP4, range requests)',
          params: taskIdParams,
          querystring: ContentQuery,
          produces: ['video/mp4'],
          response: ContentAnswers,
        },
      },
      async (request, reply) => {
        const doc = await findOwnTask(deps, request, vidH3VideoProjection, taskNotExist(404));
        if (doc.body.status !== 'completed' || !doc.assetKey) {
          throw new GatewayError(409, 'video_not_ready', `task_id: the video is ${doc.body.status}; its content is available once completed`, 'task_id');
        }
        if (doc.expired) throw new GatewayError(410, 'video_expired', 'task_id: the video has expired and was deleted', 'task_id');
        return sendAsset(request, reply, deps.assets, doc.assetKey, {
          'cache-control': 'private, max-age=300',
          'content-disposition': `inline; filename="${doc.body.id}.mp4"`,
        });
      },
    );
  };
}
