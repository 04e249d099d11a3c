/**
 * The `clip` endpoints (spec 4.12): two submit paths and two query paths. A task is found under
 * either query path (the id alone names it, as the gateways of this family do); the path it was
 * submitted on only picks the upstream endpoint. `request_id` is this request's id.
 */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { GatewayDeps } from '../../http/deps.js';
import { CLIP_FAMILY, clipSubmitResponse, clipTaskProjection } from './view.js';
import { findOwnTask, taskNotExist } from '../kit/query.js';
import { submitHeaders, taskIdParams } from '../kit/schema.js';
import { submitFamilyTask } from '../kit/submit.js';
import { CLIP_ACTIONS, CLIP_BASE64_FIELDS, CLIP_URL_FIELDS, planClip } from './request.js';
import { CLIP_BODIES, ClipSubmitAnswer, ClipTaskAnswer } from './schema.js';
import { CLIP_PATH } from './upstream.js';

export function clipRoutes(deps: GatewayDeps): FastifyPluginAsyncZod {
  return async (app) => {
    const config = { auth: 'bearer', errorShape: 'openai' } as const;

    for (const action of CLIP_ACTIONS) {
      app.post(
        `${CLIP_PATH}/${action}`,
        {
          config,
          schema: {
            tags: ['video'],
            summary: `Submit a clip ${action} task`,
            headers: submitHeaders,
            body: CLIP_BODIES[action],
            response: { 200: ClipSubmitAnswer },
          },
        },
        async (request) => {
          const { task } = await submitFamilyTask(deps, request, {
            family: CLIP_FAMILY,
            channelFamily: 'clip',
            plan: () => planClip(request.body, action),
            urlFields: CLIP_URL_FIELDS,
            base64Fields: CLIP_BASE64_FIELDS,
          });
          return clipSubmitResponse(task, request.id);
        },
      );

      app.get(
        `${CLIP_PATH}/${action}/:task_id`,
        { config, schema: { tags: ['video'], summary: 'Query a clip task', params: taskIdParams, response: { 200: ClipTaskAnswer } } },
        async (request) => {
          const doc = await findOwnTask(deps, request, clipTaskProjection, taskNotExist(404));
          return { ...doc.body, request_id: request.id };
        },
      );
    }
  };
}
