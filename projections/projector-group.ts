/**
 * Projectors that share the work and fail over (issue 26), on the distributed deployment's bus:
 * every projector instance joins one consumer group on a topic that carries no messages, and
 * the partitions the group assigns it are the shards it runs. Each projection belongs to the
 * shard its name hashes to (`projection:<name>`), and each process that must run once per
 * deployment (the publisher, the event-log metrics) to the shard of its own name
 * (`singleton:<name>`): the owner of a shard runs what belongs to it, nothing else.
 *
 * - Sharing: two instances split the shards, so each folds about half of the projections (one
 *   runner over its own, their checkpoints their own, committed with their views).
 * - Fail-over: an instance that stops leaves the group at once; one killed is dropped when its
 *   session ends (PROJECTOR_SESSION_MS, 10 s), and the group hands its shards to the others, which
 *   resume each projection from its checkpoint. A batch the killed one had not committed is
 *   folded again from that checkpoint; one it had committed is not, and a document already at or
 *   past an event's position skips it (runner.ts), so no view loses or repeats an event.
 * - Hand-over: a revoke stops what the shard ran at once, but kafkajs does not wait for its
 *   listeners (src/adapters/kafka/member.ts), so a new owner may start while the old one ends its
 *   batch, and an instance paused past its session may wake and go on folding. Both fold the
 *   same events in the same order; a document skips an event at or below its position, the view
 *   store ignores a write at or below a document's position, and a checkpoint moves only
 *   forward: an overlap costs work, never a view's correctness. A publisher overlap sends some
 *   events twice, which its consumers drop by event id.
 */
import type { Logger } from 'pino';
import type { BackgroundProcess } from '../src/lib/background.js';
import type { Bus, Consumer } from '../src/ports/bus.js';
import type { EventStore } from '../src/ports/event-store.js';
import { projectionProcess } from './process.js';
import type { Projection } from './projection.js';
import type { ProjectionRunner } from './runner.js';

export const PROJECTOR_TOPIC = 'gateway.projector-shards.v1';
export const PROJECTOR_GROUP = 'gateway-projectors';

export interface ProjectorGroupOptions {
  bus: Bus;
  events: EventStore;
  projections: readonly Projection[];
  /** A runner over some of the projections, not started. */
  runnerFor(projections: readonly Projection[]): ProjectionRunner;
  /** What one instance of the deployment runs at a time, each on the shard of its name. */
  singletons: readonly BackgroundProcess[];
  log: Logger;
  clock: () => Date;
  groupId?: string;
}

export interface ProjectorGroup extends BackgroundProcess {
  /** What this instance runs now: its projections' and singletons' names. */
  running(): { projections: string[]; singletons: string[] };
}

/**
 * A killed projector's shards move after this: its views stand still meanwhile. Short beside the
 * workers' 30 s (a projector holds no upstream work a stall could duplicate), long beside a batch.
 */
export const PROJECTOR_SESSION_MS = 10_000;

/** Between tries of an ownership change that failed (a runner whose store did not answer). */
const RETRY_MS = 1000;

/** While an instance owns no projection, it shows it is alive (in the group) this often. */
const STANDBY_PASS_MS = 1000;

export const shardOfProjection = (bus: Bus, name: string): number => bus.partitionOf(`projection:${name}`);
export const shardOfSingleton = (bus: Bus, name: string): number => bus.partitionOf(`singleton:${name}`);

export function createProjectorGroup(o: ProjectorGroupOptions): ProjectorGroup {
  const owned = new Set<number>();
  let consumer: Consumer | undefined;
  let stopped = true;
  let folding: { names: string[]; process: BackgroundProcess } | undefined;
  const runningSingletons = new Set<BackgroundProcess>();
  let standbyPass: Date | undefined;
  let standbyTimer: NodeJS.Timeout | undefined;
  // Changes apply one at a time, in the order the group made them.
  let changes: Promise<void> = Promise.resolve();

  const ownedProjections = () => (stopped ? [] : o.projections.filter((p) => owned.has(shardOfProjection(o.bus, p.name))));

  async function applyOwnership(): Promise<void> {
    const projections = ownedProjections();
    const singletons = stopped ? [] : o.singletons.filter((s) => owned.has(shardOfSingleton(o.bus, s.name)));
    for (const s of [...runningSingletons].reverse()) {
      if (singletons.includes(s)) continue;
      await s.stop();
      runningSingletons.delete(s);
    }
    const names = projections.map((p) => p.name);
    if (names.join('\n') !== (folding?.names ?? []).join('\n')) {
      await folding?.process.stop();
      folding = undefined;
      if (names.length > 0) {
        const runner = o.runnerFor(projections);
        await runner.start();
        const process = projectionProcess(o.events, runner, o.clock);
        await process.start();
        folding = { names, process };
      }
      o.log.info({ shards: [...owned].sort((a, b) => a - b), projections: names }, 'projector: the projections this instance folds');
    }
    for (const s of singletons) {
      if (runningSingletons.has(s)) continue;
      await s.start();
      runningSingletons.add(s);
      o.log.info({ singleton: s.name }, 'projector: runs this one for the deployment');
    }
  }

  const running = () => ({ projections: folding?.names ?? [], singletons: [...runningSingletons].map((s) => s.name) });

  function reapply(): Promise<void> {
    changes = changes.then(applyOwnership).catch((err: unknown) => {
      // A store that did not answer a runner's start: tried again, never left owned and idle.
      o.log.error({ err }, 'projector: applying an ownership change failed; trying again');
      if (!stopped) setTimeout(() => void reapply(), RETRY_MS).unref();
    });
    return changes;
  }

  return {
    name: 'projections',
    // Folding: the runner's last pass. Owning nothing to fold: alive in the group. Owning
    // projections it does not fold (their start failed): no pass, which /readyz shows.
    lastPass: () => (folding ? folding.process.lastPass() : ownedProjections().length === 0 ? standbyPass : undefined),
    running,
    // In /readyz: which instance folds what.
    detail: () => ({ shards: [...owned].sort((a, b) => a - b), ...running() }),
    async start() {
      stopped = false;
      standbyPass = o.clock();
      standbyTimer = setInterval(() => (standbyPass = o.clock()), STANDBY_PASS_MS);
      standbyTimer.unref();
      consumer = await o.bus.consume({
        topic: PROJECTOR_TOPIC,
        groupId: o.groupId ?? PROJECTOR_GROUP,
        fromBeginning: false,
        sessionTimeoutMs: PROJECTOR_SESSION_MS,
        // A shard kept through a rebalance keeps folding; an overlap while one moves is harmless
        // (documents skip events at or below their position, checkpoints only move forward).
        incrementalRebalance: true,
        handle: async () => undefined,
        onAssign: (partitions) => {
          for (const p of partitions) owned.add(p);
          return reapply();
        },
        onRevoke: (partitions) => {
          for (const p of partitions) owned.delete(p);
          return reapply();
        },
      });
      await changes;
    },
    async stop() {
      stopped = true;
      clearInterval(standbyTimer);
      await consumer?.close();
      consumer = undefined;
      owned.clear();
      await reapply();
    },
  };
}
