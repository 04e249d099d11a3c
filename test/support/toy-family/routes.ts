/**
 * Step 6 of docs/adding-a-family.md, `routes.ts`: the toy endpoints as a route plugin typed
 * `FastifyPluginAsyncZod`. Each route declares its auth and error shape in `config` (applied by
 * src/http/route-config.ts: the key is checked before the body) and its schema (schema.ts); the
 * handlers read `request.caller` through the kit's pipelines.
 *   POST /toy/v1/sketches             submit (kit/submit.ts `submitFamilyTask`)
 *   GET  /toy/v1/sketches/{task_id}   the task (kit/query.ts `findOwnTask`): another account's answers 404 like a missing one
 * Every refusal is `{code, message, error: {message, type, param, code}}` (the `plain` shape).
 */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { GatewayDeps } from '../../../src/http/deps.js';
import { findOwnTask, taskNotExist } from '../../../src/families/kit/query.js';
import { submitHeaders, taskIdParams } from '../../../src/families/kit/schema.js';
import { submitFamilyTask } from '../../../src/families/kit/submit.js';
import { TOY_CHANNEL_FAMILY } from './catalog.js';
import { planToy, TOY_URL_FIELDS } from './request.js';
import { ToySubmitBody, ToyTaskAnswer } from './schema.js';
import { submittedToyBody, TOY_FAMILY, toyTaskProjection } from './view.js';

export const TOY_PATH = '/toy/v1/sketches';

export function toyRoutes(deps: GatewayDeps): FastifyPluginAsyncZod {
  return async (app) => {
    const config = { auth: 'bearer', errorShape: 'plain' } as const;

    app.post(
      TOY_PATH,
      {
        config,
        schema: { tags: ['toy'], summary: 'Submit a toy sketch task', headers: submitHeaders, body: ToySubmitBody, response: { 200: ToyTaskAnswer } },
      },
      async (request) => {
        const { task } = await submitFamilyTask(deps, request, {
          family: TOY_FAMILY,
          channelFamily: TOY_CHANNEL_FAMILY,
          plan: () => planToy(request.body),
          urlFields: TOY_URL_FIELDS,
        });
        return submittedToyBody(task);
      },
    );

    app.get(
      `${TOY_PATH}/:task_id`,
      { config, schema: { tags: ['toy'], summary: 'Query a toy sketch task', params: taskIdParams, response: { 200: ToyTaskAnswer } } },
      async (request) => (await findOwnTask(deps, request, toyTaskProjection, taskNotExist(404))).body,
    );
  };
}
