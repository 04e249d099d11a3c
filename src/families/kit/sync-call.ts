/**
 * What every synchronous route passes to runSyncTask from its request: the `Idempotency-Key`
 * and the body it is matched on, the task id as the `x-task-id` response header (set before any
 * upstream work, so a streamed answer and an error carry it too: the id to query the result
 * by), and a signal for the client going away.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { idempotencyKeyOf } from './submit.js';

export const TASK_ID_HEADER = 'x-task-id';

export function syncCallOptions(request: FastifyRequest, reply: FastifyReply, body: unknown = request.body) {
  const gone = new AbortController();
  reply.raw.once('close', () => gone.abort());
  return {
    idempotencyKey: idempotencyKeyOf(request),
    body,
    signal: gone.signal,
    // On the raw response: an SSE answer writes its head there itself.
    onTask: (taskId: string) => {
      if (!reply.raw.headersSent) reply.raw.setHeader(TASK_ID_HEADER, taskId);
    },
  };
}
