/**
 * For processes that do not run the projections themselves (the `api` and `worker` roles of the
 * distributed deployment, the API process of PROCESSES=2): read-your-writes by watching the
 * projections' checkpoints in the view store, which the process that projects moves.
 */
import type { ViewStore, ViewWrite } from '../src/ports/view-store.js';
import type { Projection } from './projection.js';
import { ProjectionLagError, type ProjectionRunner } from './runner.js';

export interface FollowerOptions {
  /** Between two looks while a caller waits. */
  everyMs?: number;
  /** Between two looks in the background. */
  refreshMs?: number;
  /**
   * Runs before the follower reaches `to` from `from` (follower-view-cache.ts drops what changed);
   * what it answers is told to the `onCommit` listeners, as a projecting runner tells its commits.
   */
  beforeAdvance?: (from: bigint, to: bigint) => Promise<readonly ViewWrite[]>;
  /** What `finalEventLags` answers (follower-view-cache.ts measures them); none by default. */
  finalEventLags?: () => readonly number[];
}

export function createCheckpointFollower(views: ViewStore, projections: readonly Projection[], options: FollowerOptions = {}): ProjectionRunner {
  const { everyMs = 25, refreshMs = 1000, beforeAdvance, finalEventLags = () => [] } = options;
  let reached = 0n;
  let timer: NodeJS.Timeout | undefined;
  // One look at a time, so `beforeAdvance` runs for consecutive ranges, in order.
  let looking: Promise<bigint> | undefined;
  const listeners = new Set<(writes: readonly ViewWrite[]) => void>();

  /** Where every projection has reached: the least of their checkpoints. */
  async function minCheckpoint(): Promise<bigint> {
    const checkpoints = await Promise.all(projections.map((p) => views.getCheckpoint(p.name)));
    return checkpoints.reduce<bigint>((m, c) => ((c ?? 0n) < m ? (c ?? 0n) : m), checkpoints[0] ?? 0n);
  }

  async function look(): Promise<bigint> {
    const min = await minCheckpoint();
    if (min > reached) {
      const writes = (await beforeAdvance?.(reached, min)) ?? [];
      if (writes.length > 0) for (const listener of listeners) listener(writes);
      reached = min;
    }
    return reached;
  }

  function read(): Promise<bigint> {
    looking ??= look().finally(() => (looking = undefined));
    return looking;
  }

  return {
    async start() {
      // Nothing is cached before the first look, so there is nothing to drop up to it.
      reached = await minCheckpoint();
      timer = setInterval(() => void read().catch(() => undefined), refreshMs);
      timer.unref();
    },
    async waitFor(position, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while ((await read()) < position) {
        if (Date.now() > deadline) throw new ProjectionLagError(position, reached);
        await new Promise((r) => setTimeout(r, everyMs));
      }
    },
    // No commits happen here: what `beforeAdvance` tells, if anything; without it, caches of a
    // follower refresh on a timer instead.
    onCommit(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    position: () => reached,
    finalEventLags,
    async stop() {
      if (timer) clearInterval(timer);
    },
  };
}
