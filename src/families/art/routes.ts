/**
 * `POST /art/submit/{imagine|describe|blend|change}` and `GET /art/task/{id}/fetch` (spec 2.7,
 * 3.5, 4.14). Submit answers `{code: 1, description: "Submit success", result: <task id>,
 * properties: {}}`; errors `{code: 4, description, result: null}` (9 for server errors); a
 * missing or another account's task is HTTP 404 `{code: 4, description: "task_no_found"}`.
 */
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { GatewayDeps } from '../../http/deps.js';
import { ART_FAMILY, artTaskProjection } from './view.js';
import { findOwnTask, type MissingTask } from '../kit/query.js';
import { submitHeaders } from '../kit/schema.js';
import { submitFamilyTask } from '../kit/submit.js';
import { changeParent } from './parent.js';
import { ART_SUBMITS, ART_URL_FIELDS, type ArtPlan, type ArtSubmit, planArt } from './request.js';
import { ART_BODIES, type ArtBody, ArtSubmitAnswer, ArtTaskAnswer, ArtTaskParams } from './schema.js';

const SUBMIT_SUCCESS = 'Submit success';

/** The family's own answer for a missing task (spec 4.14). */
const TASK_NO_FOUND: MissingTask = { param: 'id', status: 404, code: 'task_no_found', message: () => 'task_no_found' };

/** CHANGE: the upstream request names the job and channel of the task changed, and its prompt. */
async function upstreamRequest(deps: GatewayDeps, plan: ArtPlan, accountId: string): Promise<Record<string, unknown>> {
  if (plan.parentTaskId === undefined) return plan.upstream;
  const parent = await changeParent(deps, plan.parentTaskId, accountId, plan.action);
  return { ...plan.upstream, prompt: parent.prompt, parentUpstreamTaskId: parent.upstreamTaskId, parentChannelId: parent.channelId };
}

async function submit(deps: GatewayDeps, request: FastifyRequest, kind: ArtSubmit, body: ArtBody<ArtSubmit>) {
  const { task } = await submitFamilyTask(deps, request, {
    family: ART_FAMILY,
    channelFamily: 'art',
    plan: () => planArt(kind, body),
    urlFields: ART_URL_FIELDS,
    upstreamOf: (plan, caller) => upstreamRequest(deps, plan, caller.accountId),
    // Four routes record one family: a key is matched on the route too.
    idempotencyBody: (body) => ({ kind, body }),
  });
  return { code: 1 as const, description: SUBMIT_SUCCESS, result: task.taskId, properties: {} };
}

export function artRoutes(deps: GatewayDeps): FastifyPluginAsyncZod {
  return async (app) => {
    const config = { auth: 'bearer', errorShape: 'art' } as const;

    for (const kind of ART_SUBMITS) {
      app.post(
        `/art/submit/${kind}`,
        {
          config,
          schema: {
            tags: ['art'],
            summary: `Submit an art ${kind.toUpperCase()} task (billed as art_${kind})`,
            headers: submitHeaders,
            body: ART_BODIES[kind],
            response: { 200: ArtSubmitAnswer },
          },
        },
        async (request) => submit(deps, request, kind, request.body),
      );
    }

    app.get(
      '/art/task/:id/fetch',
      { config, schema: { tags: ['art'], summary: 'Query an art task', params: ArtTaskParams, response: { 200: ArtTaskAnswer } } },
      async (request) => (await findOwnTask(deps, request, artTaskProjection, TASK_NO_FOUND)).body,
    );
  };
}
