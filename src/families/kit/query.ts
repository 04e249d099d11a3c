/**
 * The one query pipeline of every async family: read the caller's task view (the caller
 * authenticated by the route's `config.auth`; engine/tasks/task-view.ts: the stream folded when
 * the view lags, asset URLs signed), and answer a missing task — or another account's, which
 * looks the same — in the family's own words.
 */
import type { FastifyRequest } from 'fastify';
import type { GatewayDeps } from '../../http/deps.js';
import { GatewayError } from '../../http/errors.js';
import { taskViewFor } from '../../engine/tasks/task-view.js';
import type { Projection } from '../../../projections/projection.js';

export interface MissingTask {
  /** The path parameter that names the task. */
  param: 'task_id' | 'id';
  status: 400 | 404;
  code: string;
  message: (taskId: string) => string;
}

/** The spec's usual answer: `task_not_exist`, naming the id. */
export const taskNotExist = (status: 400 | 404, param: 'task_id' | 'id' = 'task_id'): MissingTask => ({
  param,
  status,
  code: 'task_not_exist',
  message: (taskId) => `${param}: no task ${taskId}`,
});

export async function findOwnTask<D extends { accountId: string }>(
  deps: GatewayDeps,
  request: FastifyRequest,
  projection: Projection<D>,
  missing: MissingTask,
): Promise<D> {
  const taskId = (request.params as Record<string, string>)[missing.param] ?? '';
  const doc = await taskViewFor(deps, projection, taskId, request.caller.accountId);
  if (!doc) throw new GatewayError(missing.status, missing.code, missing.message(taskId), missing.param);
  return doc;
}
