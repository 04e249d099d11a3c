/**
 * "The views show everything written so far." The store's head may be an event no projection
 * consumes (an idempotency claim on an `idem-` stream), which the views will never "reach";
 * so the wait is for the newest event of the projected streams at or below the head.
 */
import { gatewayStreamPrefixes } from '../src/domain/events.js';
import type { EventStore } from '../src/ports/event-store.js';
import { ProjectionLagError } from './runner.js';

export async function waitForProjectedHead(
  events: EventStore,
  views: { position(): bigint; waitFor(position: bigint, timeoutMs?: number): Promise<void> },
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const head = await events.headPosition();
  for (;;) {
    // The first projected event the views have not shown yet; each round waits for one, and the
    // views fold whole batches, so this takes a handful of rounds even far behind.
    const [next] = await events.readAll({ after: views.position(), maxCount: 1, streamPrefixes: gatewayStreamPrefixes });
    if (!next || next.position > head) return;
    const left = deadline - Date.now();
    if (left <= 0) throw new ProjectionLagError(next.position, views.position());
    await views.waitFor(next.position, left);
  }
}
