/**
 * The motion endpoints (spec 4.15): the text-to-video and image-to-video submit paths, each with
 * its own model set, and `GET /vendor/api/v1/tasks/{task_id}` for the task (the spec leaves the
 * query open; this is the family's native one). Errors are `{code, message}`. The "channel API
 * key" is a gateway token bound to a channel (`channel_id`): its tasks go only to that channel.
 */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { GatewayDeps } from '../../http/deps.js';
import { MOTION_FAMILY, motionSubmitResponse, motionTaskProjection } from './view.js';
import { findOwnTask, taskNotExist } from '../kit/query.js';
import { submitHeaders, taskIdParams } from '../kit/schema.js';
import { submitFamilyTask } from '../kit/submit.js';
import { MOTION_URL_FIELDS, type MotionPath, planMotion } from './request.js';
import { MOTION_BODIES, MotionSubmitAnswer, MotionTaskAnswer } from './schema.js';
import { MOTION_SUBMIT_PATHS, MOTION_TASKS_PATH } from './upstream.js';

export function motionRoutes(deps: GatewayDeps): FastifyPluginAsyncZod {
  return async (app) => {
    const config = { auth: 'bearer', errorShape: 'plain' } as const;

    for (const path of ['text', 'image'] as const satisfies readonly MotionPath[]) {
      const summary = path === 'text' ? 'Submit a motion text-to-video task' : 'Submit a motion image-to-video task';
      app.post(
        MOTION_SUBMIT_PATHS[path],
        { config, schema: { tags: ['video'], summary, headers: submitHeaders, body: MOTION_BODIES[path], response: { 200: MotionSubmitAnswer } } },
        async (request) => {
          const { task } = await submitFamilyTask(deps, request, {
            family: MOTION_FAMILY,
            channelFamily: 'motion',
            plan: () => planMotion(request.body, path),
            urlFields: MOTION_URL_FIELDS,
          });
          return motionSubmitResponse(task, request.id);
        },
      );
    }

    app.get(
      `${MOTION_TASKS_PATH}/:task_id`,
      { config, schema: { tags: ['video'], summary: 'Query a motion task', params: taskIdParams, response: { 200: MotionTaskAnswer } } },
      async (request) => {
        const doc = await findOwnTask(deps, request, motionTaskProjection, taskNotExist(404));
        return { ...doc.body, request_id: request.id };
      },
    );
  };
}
