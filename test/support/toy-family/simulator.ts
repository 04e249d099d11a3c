/**
 * Step 8 of docs/adding-a-family.md, the simulator (src/simulator/families/<family>.ts for a
 * built-in family, listed in src/simulator/families/index.ts; this one is mounted by the test
 * through `GatewayOptions.extraSimulatorFamilies`): the toy upstream as the simulator plays it,
 * a `SimFamily` (src/simulator/context.ts). It reads its family's protocol (upstream.ts); no
 * family imports it. Stateless: everything a poll needs is in the signed job id (ctx.codec), the
 * state a function of the clock (timeline.ts, read through sim-task.ts); `[sim:*]` markers in
 * the prompt steer it (markers.ts); the pictures are real PNGs (media.ts) at
 * `{prefix}/files/<job>/<i>.png`.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { SimContext, SimFamily, SimFile } from '../../../src/simulator/context.js';
import {
  fileUrl,
  notFound,
  parseWith,
  plainErrorBody,
  refuseByMarkers,
  requestMarkers,
  requestOrigin,
  requireBearer,
  useSimErrorShape,
  wildcardParam,
} from '../../../src/simulator/http.js';
import { resultCount } from '../../../src/simulator/markers.js';
import { makePng } from '../../../src/simulator/media.js';
import { resultsExpired, taskState, TIMED_FIELDS, timedNow } from '../../../src/simulator/sim-task.js';
import type { TimelineState } from '../../../src/simulator/timeline.js';
import { TOY_UPSTREAM_PATH } from './upstream.js';

const SubmitBody = z.looseObject({ model: z.string().min(1), prompt: z.string().min(1), n: z.number().int().min(1).max(16), style: z.string().optional() });

/** Everything a later poll needs, inside the job id (src/simulator/task-id.ts). */
const ToyJob = z.object({ f: z.literal('toy'), m: z.string(), n: z.number().int().min(1), ...TIMED_FIELDS });
type ToyJob = z.infer<typeof ToyJob>;

const STATE: Readonly<Record<TimelineState['status'], string>> = { queued: 'waiting', in_progress: 'drawing', completed: 'finished', failed: 'broken' };
const sideOf = (model: string): number => (model.endsWith('-hd') ? 128 : 64);

function routes(app: FastifyInstance, ctx: SimContext): void {
  useSimErrorShape(app, plainErrorBody);
  app.addHook('onRequest', requireBearer);

  app.post(TOY_UPSTREAM_PATH, async (request) => {
    const body = parseWith(SubmitBody, request.body);
    const markers = requestMarkers(request, [body.prompt]);
    refuseByMarkers(markers);
    const job = ctx.codec.encode({ f: 'toy', m: body.model, n: body.n, ...timedNow(markers, ctx) });
    return { job, state: 'waiting' };
  });

  app.get<{ Params: { '*': string } }>(`${TOY_UPSTREAM_PATH}/*`, async (request) => {
    const id = wildcardParam(request);
    const job = ctx.codec.decode(id, ToyJob);
    if (!job) throw notFound('job_not_found', 'no such job');
    const { markers, state } = taskState(job, ctx);
    if (markers.lostOnPoll) throw notFound('job_not_found', 'the upstream lost this job ([sim:4xx-poll])');
    const done = state.status === 'completed';
    const count = resultCount(job.n, markers);
    return {
      job: id,
      state: STATE[state.status],
      percent: state.progress,
      pictures: done ? Array.from({ length: count }, (_, i) => ({ href: fileUrl(requestOrigin(request), ctx.prefix, id, `${i}.png`) })) : [],
      reason: state.status === 'failed' ? 'simulated failure ([sim:fail])' : '',
    };
  });
}

/** `<i>.png` of a finished job, while it is kept. */
function file(id: string, name: string, ctx: SimContext): SimFile | undefined {
  const job = ctx.codec.decode(id, ToyJob);
  const index = /^(\d+)\.png$/.exec(name)?.[1];
  if (!job || index === undefined) return undefined;
  const { markers, state } = taskState(job, ctx);
  if (state.status !== 'completed' || Number(index) >= resultCount(job.n, markers) || resultsExpired(state.finishedAt, ctx)) return undefined;
  const side = sideOf(job.m);
  return { contentType: 'image/png', body: makePng(side, side, `${id}:${index}`) };
}

export const toySimFamily: SimFamily = { name: 'toy', routes, file };
