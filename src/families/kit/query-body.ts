import type { QueryBody } from '../../engine/callbacks.js';
import type { GatewayDeps } from '../../http/deps.js';
import { taskViewFor } from '../../http/task-views.js';
import type { Projection } from '../../../projections/projection.js';

/** The callback body of a family whose view document holds the query response in `body`. */
export function viewBody<D extends { accountId: string; body: unknown }>(family: string, projection: Projection<D>) {
  return (deps: GatewayDeps): Readonly<Record<string, QueryBody>> => ({
    [family]: async (taskId, accountId) => (await taskViewFor(deps, projection, taskId, accountId))?.body,
  });
}
