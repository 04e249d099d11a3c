/**
 * Reading a task's query view for its caller: the projected document, or the task stream
 * folded through the same projection when the view lags. Another account's task is
 * indistinguishable from a missing one. Every query route and every callback body reads
 * through here, so this is where the view's asset references become URLs signed on this
 * instance's public base (sign-asset-refs.ts).
 *
 * A signed document is a pure function of the stored one (each reference carries its own
 * expiry) and the public base, so the answer of a document polled again — the same object, from
 * the view cache (projections/view-cache.ts) — is kept beside it instead of signed again. It is
 * frozen: readers share it, and the response serializer may keep its JSON (src/http/response-serializer.ts).
 */
import { streams } from '../../domain/events.js';
import type { RecordedEvent } from '../../ports/event-store.js';
import type { Projection } from '../../../projections/projection.js';
import { foldDocument } from '../../../projections/fold.js';
import type { RequestDeps } from './request-deps.js';
import { signAssetRefs } from '../media/sign-asset-refs.js';
import type { AssetSigner } from '../media/assets.js';

export async function taskViewFor<D extends { accountId: string }>(
  deps: Pick<RequestDeps, 'views' | 'events' | 'signer'>,
  projection: Projection<D>,
  taskId: string,
  accountId: string,
): Promise<D | undefined> {
  if (!/^[\w-]{1,128}$/.test(taskId)) return undefined;
  const stored = await deps.views.get<D>(projection.view, taskId);
  const doc = stored?.doc ?? foldDocument(projection, await deps.events.readStream(streams.task(taskId)));
  return doc && doc.accountId === accountId ? signedOnce(doc, deps.signer, taskId) : undefined;
}

/**
 * The query view of a task as of `events` (its stream, or a prefix of it), folded through the
 * view's own projection and signed like a query answer: callback bodies, which must show the
 * task as of the event that scheduled them, whatever the stored view holds by then. The refs
 * carry their own expiry, so the same events on the same base sign to the same URLs.
 */
export function taskViewFromEvents<D extends { accountId: string }>(
  deps: Pick<RequestDeps, 'signer'>,
  projection: Projection<D>,
  events: readonly RecordedEvent[],
  taskId: string,
  accountId: string,
): D | undefined {
  const doc = foldDocument(projection, events);
  return doc && doc.accountId === accountId ? signAssetRefs(doc, deps.signer, taskId) : undefined;
}

/** Per stored document object; gone with it when the view cache lets it go. */
const signedDocuments = new WeakMap<object, { base: string; signed: unknown }>();

function signedOnce<D extends object>(doc: D, signer: AssetSigner, taskId: string): D {
  const base = signer.base();
  const kept = signedDocuments.get(doc);
  if (kept && kept.base === base) return kept.signed as D;
  const signed = deepFreeze(signAssetRefs(doc, signer, taskId));
  signedDocuments.set(doc, { base, signed });
  return signed;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
