import type { CallbackBody } from '../../engine/outbound/callbacks.js';
import { taskViewFromEvents } from '../../engine/tasks/task-view.js';
import type { GatewayDeps } from '../../http/deps.js';
import type { Projection } from '../../../projections/projection.js';

/**
 * The callback body of a family whose view document holds the query response in `body`: that
 * response as of the events the deliverer passes (the task up to its final event).
 */
export function viewBody<D extends { accountId: string; body: unknown }>(family: string, projection: Projection<D>) {
  return (deps: GatewayDeps): Readonly<Record<string, CallbackBody>> => ({
    [family]: async (events, taskId, accountId) => taskViewFromEvents(deps, projection, events, taskId, accountId)?.body,
  });
}
