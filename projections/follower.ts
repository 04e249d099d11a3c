/**
 * For processes that do not run the projections themselves (the `api` and `worker` roles of the
 * distributed deployment): read-your-writes by watching the projections' checkpoints in the
 * view store, which the `projector` role moves.
 */
import type { ViewStore } from '../src/ports/view-store.js';
import type { Projection } from './projection.js';
import { ProjectionLagError, type ProjectionRunner } from './runner.js';

export function createCheckpointFollower(views: ViewStore, projections: readonly Projection[], everyMs = 25): ProjectionRunner {
  let reached = 0n;
  let timer: NodeJS.Timeout | undefined;

  async function read(): Promise<bigint> {
    const checkpoints = await Promise.all(projections.map((p) => views.getCheckpoint(p.name)));
    const min = checkpoints.reduce<bigint>((m, c) => ((c ?? 0n) < m ? (c ?? 0n) : m), checkpoints[0] ?? 0n);
    if (min > reached) reached = min;
    return reached;
  }

  return {
    async start() {
      await read();
      timer = setInterval(() => void read().catch(() => undefined), 1000);
      timer.unref();
    },
    async waitFor(position, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while ((await read()) < position) {
        if (Date.now() > deadline) throw new ProjectionLagError(position, reached);
        await new Promise((r) => setTimeout(r, everyMs));
      }
    },
    // No commits happen here: caches of a follower refresh on a timer instead.
    onCommit: () => () => undefined,
    position: () => reached,
    finalEventLags: () => [],
    async stop() {
      if (timer) clearInterval(timer);
    },
  };
}
