/**
 * The one synchronous call pipeline of every family, beside the async one (submit.ts): for the
 * caller (authenticated by the route's `config.auth`, src/http/route-config.ts), plan (the
 * family's rules), check the model against the key, apply the URL policy, then run the call as
 * a task (engine/tasks/sync-task.ts: reserve and record — idempotently with `Idempotency-Key` —
 * call with fail-over, settle) and answer it, in that order, so a refused request appends nothing. A family passes only what is its own: its rules,
 * its URL fields, its upstream call, its answer, and a streamed answer when it has one.
 *
 * The task id is the `x-task-id` response header, set before any upstream work (so a streamed
 * answer and an error carry it too: the id to query the result by); a client that goes away
 * stops a retry's waiting, never the call.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { UpstreamContext } from '../../engine/channels/upstream.js';
import { runSyncTask, type SyncCallResult } from '../../engine/tasks/sync-task.js';
import type { SucceededSyncCall } from '../../engine/tasks/sync-record.js';
import { assertModelAllowed } from '../../http/auth/bearer.js';
import type { GatewayDeps } from '../../http/deps.js';
import { metadataFor } from '../../http/request-meta.js';
import { acceptedPlan, type PlanResult } from './plan.js';
import { idempotencyKeyOf, type TaskPlan } from './submit.js';
import type { UrlFieldSpec } from './url-fields.js';
import { enforceUrlPolicyOn } from './url-policy.js';

export const TASK_ID_HEADER = 'x-task-id';

/** What every family's rules decide for a synchronous call: what they decide for a task (submit.ts), and the recorded request. */
export interface SyncPlan extends Pick<TaskPlan, 'action' | 'model' | 'units' | 'tier'> {
  /** The request as recorded on the task (inline images as short placeholders). */
  recorded: Record<string, unknown>;
}

/** A streamed answer (`text/event-stream`): it starts lazily, so a refusal before its first frame is still a JSON error. */
export interface SyncStream {
  /** Comment frames while the call (or the first call, for a retry) works. */
  keepAlive(): void;
  /** Writes the succeeded call's answer and ends the stream. */
  finish(call: SucceededSyncCall): void | Promise<void>;
  /** Ends the stream with the error as a frame; before the stream started, rethrows it. */
  fail(error: unknown): void;
}

export interface SyncCallSpec<P extends SyncPlan, S extends SyncStream, A> {
  /** TaskSubmitted family the sync-results view and the query by id recognise. */
  family: string;
  /** Upstream protocol (channel family). */
  channelFamily: string;
  plan: (body: unknown) => PlanResult<P>;
  /** Every field of the body that names a URL, for the URL policy (none: nothing to check). */
  urlFields?: readonly UrlFieldSpec[];
  /** How result images reach the answer (default `url`: re-hosted, signed gateway URLs). */
  delivery?: (plan: P) => 'url' | 'b64';
  /** The upstream call (with the stream, when the answer is streamed). */
  call: (ctx: UpstreamContext, plan: P, stream: S | undefined) => Promise<SyncCallResult>;
  /** The JSON answer of the succeeded call. */
  answer: (call: SucceededSyncCall, plan: P) => A | Promise<A>;
  /** The streamed answer instead, when the plan asks for one. */
  stream?: (plan: P, reply: FastifyReply) => S | undefined;
}

/** The answer: the JSON body, or the reply a streamed answer was written to. */
export async function runFamilySyncCall<P extends SyncPlan, A, S extends SyncStream = SyncStream>(
  deps: GatewayDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  spec: SyncCallSpec<P, S, A>,
): Promise<A | FastifyReply> {
  const { caller } = request;
  const plan = acceptedPlan(spec.plan(request.body));
  assertModelAllowed(caller, plan.model, deps.catalog);
  if (spec.urlFields) await enforceUrlPolicyOn(deps, request.body, spec.urlFields);
  const stream = spec.stream?.(plan, reply);
  const gone = new AbortController();
  reply.raw.once('close', () => gone.abort());
  try {
    const { call } = await runSyncTask(
      deps,
      {
        family: spec.family,
        channelFamily: spec.channelFamily,
        action: plan.action,
        model: plan.model,
        caller,
        request: plan.recorded,
        units: plan.units,
        ...(plan.tier !== undefined ? { tier: plan.tier } : {}),
        metadata: metadataFor(request, deps.clock()),
        delivery: spec.delivery?.(plan) ?? 'url',
        // The multipart forms are decoded into the body before validation: the key is matched on that.
        idempotencyKey: idempotencyKeyOf(request),
        body: request.body,
        signal: gone.signal,
        onTask: (taskId, replayed) => {
          // On the raw response: a streamed answer writes its head there itself.
          if (!reply.raw.headersSent) reply.raw.setHeader(TASK_ID_HEADER, taskId);
          // A retry waiting for the first call keeps its stream alive like the call does.
          if (replayed) stream?.keepAlive();
        },
      },
      async (ctx) => {
        stream?.keepAlive();
        return spec.call(ctx, plan, stream);
      },
    );
    if (!stream) return spec.answer(call, plan);
    await stream.finish(call);
    return reply;
  } catch (err) {
    if (!stream) throw err;
    stream.fail(err);
    return reply;
  }
}
