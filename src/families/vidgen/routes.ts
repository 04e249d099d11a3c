/** `POST /v1/video/generations` and `GET /v1/video/generations/{task_id}` (spec 4.3, 4.4). */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { GatewayDeps } from '../../http/deps.js';
import { VIDGEN_FAMILY, vidgenSubmitResponse, vidgenTaskProjection } from './view.js';
import { findOwnTask, taskNotExist } from '../kit/query.js';
import { submitHeaders, taskIdParams } from '../kit/schema.js';
import { submitFamilyTask } from '../kit/submit.js';
import { planVidgen, VIDGEN_URL_FIELDS } from './request.js';
import { VidgenBody, VidgenSubmitAnswer, VidgenTaskAnswer } from './schema.js';
import { VIDGEN_PATH } from './upstream.js';

export function vidgenRoutes(deps: GatewayDeps): FastifyPluginAsyncZod {
  return async (app) => {
    // The spec leaves the vidgen error body open; the OpenAI shape matches its OpenAI-style submit object.
    const config = { auth: 'bearer', errorShape: 'openai' } as const;

    app.post(
      VIDGEN_PATH,
      {
        config,
        schema: {
          tags: ['video'],
          summary: 'Submit a vidgen video task',
          headers: submitHeaders,
          body: VidgenBody,
          response: { 200: VidgenSubmitAnswer },
        },
      },
      async (request) => {
        const { task } = await submitFamilyTask(deps, request, {
          family: VIDGEN_FAMILY,
          channelFamily: 'vidgen',
          plan: () => planVidgen(request.body),
          urlFields: VIDGEN_URL_FIELDS,
        });
        return vidgenSubmitResponse(task);
      },
    );

    app.get(
      `${VIDGEN_PATH}/:task_id`,
      { config, schema: { tags: ['video'], summary: 'Query a vidgen video task', params: taskIdParams, response: { 200: VidgenTaskAnswer } } },
      async (request) => (await findOwnTask(deps, request, vidgenTaskProjection, taskNotExist(404))).body,
    );
  };
}
