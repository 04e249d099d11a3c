/**
 * Reading a task's query view for its caller: the projected document, or the task stream
 * folded through the same projection when the view lags. Another account's task is
 * indistinguishable from a missing one. Every query route and every callback body reads
 * through here, so this is where the view's asset references become URLs signed on this
 * instance's public base (sign-asset-refs.ts).
 */
import { streams } from '../domain/events.js';
import type { Projection } from '../../projections/projection.js';
import { foldDocument } from '../../projections/fold.js';
import type { RequestDeps } from './request-deps.js';
import { signAssetRefs } from './sign-asset-refs.js';

export async function taskViewFor<D extends { accountId: string }>(
  deps: Pick<RequestDeps, 'views' | 'events' | 'signer'>,
  projection: Projection<D>,
  taskId: string,
  accountId: string,
): Promise<D | undefined> {
  if (!/^[\w-]{1,128}$/.test(taskId)) return undefined;
  const stored = await deps.views.get<D>(projection.view, taskId);
  const doc = stored?.doc ?? foldDocument(projection, await deps.events.readStream(streams.task(taskId)));
  return doc && doc.accountId === accountId ? signAssetRefs(doc, deps.signer, taskId) : undefined;
}
