/**
 * One consumer-group member of one topic (a kafkajs consumer), at-least-once:
 *
 * - `eachMessage` with autoCommit off; the offset after a message is committed only once its
 *   handler resolved. A handler that throws gets the same message again after a growing
 *   backoff (later messages of the partition wait); between attempts the member heartbeats, and
 *   when that reports a rebalance the error goes to kafkajs, which rejoins the group, and the
 *   message stays uncommitted for the partition's next owner.
 * - Ownership (kafkajs uses the eager protocol): a member gives up all its partitions when it
 *   rejoins. `REBALANCING` is emitted after in-flight messages finished and before the member
 *   sends JoinGroup, so onRevoke(all owned) runs there — before any other member can be given
 *   those partitions, since the group's new assignment needs this member's JoinGroup. GROUP_JOIN
 *   carries the new assignment: revoked = previous minus new (for rejoins without REBALANCING,
 *   e.g. after a session timeout), assigned = new minus previous. kafkajs does not await its
 *   listeners: a promise returned by onRevoke may still run when another member is assigned;
 *   messages of a partition are only handled after its onAssign resolved.
 * - `incrementalRebalance`: `REBALANCING` revokes nothing; the member keeps its partitions (and
 *   their work) until GROUP_JOIN's assignment says which moved, and only those are revoked and
 *   assigned. Should no assignment come within the rebalance timeout (by then the group has
 *   finished without this member), everything is revoked. kafkajs gives no cooperative protocol:
 *   this is the incremental hand-over built on the eager one, at the price of a moment with two
 *   owners for a partition that moves (its new owner may hear of it first). Such members assign
 *   with the sticky assigner (sticky-assigner.ts): a rebalance moves only what it must.
 * - `CRASH`: the member lost its partitions (onRevoke). kafkajs restarts the consumer itself
 *   when the error is retriable; otherwise this member starts a new consumer after a backoff.
 * - `close()`: pauses fetching, waits for in-flight handlers, revokes, then leaves the group.
 */
import { PartitionAssigners, type Consumer as KafkaConsumer, type ConsumerConfig, type EachMessagePayload, type Kafka } from 'kafkajs';
import { stickyAssigner } from './sticky-assigner.js';
import { notifyListener, type Consumer, type ConsumerOptions } from '../../ports/bus.js';
import { fromKafkaMessage } from './messages.js';
import { backoffDelay, sleep, type Backoff } from '../../lib/backoff.js';

export interface MemberCrash {
  topic: string;
  groupId: string;
  error: Error;
  /** True when kafkajs restarts the consumer itself; otherwise this member restarts it. */
  restartedByKafkajs: boolean;
}

export interface MemberOptions {
  kafka: Kafka;
  config: ConsumerConfig;
  options: ConsumerOptions;
  /** Partitions handled concurrently (messages of one partition are always sequential). */
  concurrency: number;
  onCrash?(crash: MemberCrash): void;
  onClosed(): void;
}

/** Between tries of a failing handler: 50 ms doubling, at most 2 s. */
const HANDLE_RETRY: Backoff = { initialMs: 50, maxMs: 2000 };
/** Between restarts of a crashed consumer: 500 ms doubling (10 times at most), at most 30 s. */
const RESTART_BACKOFF: Backoff = { initialMs: 500, maxMs: 30_000, maxDoublings: 10 };

export async function startMember(o: MemberOptions): Promise<Consumer> {
  const { topic, groupId } = o.options;
  const owned = new Set<number>();
  /** Per partition: resolves once its onAssign has run. */
  const assigned = new Map<number, Promise<void>>();
  const inflight = new Set<Promise<void>>();
  let listeners: Promise<void> = Promise.resolve();
  let consumer: KafkaConsumer | undefined;
  /** Set as soon as close() starts; `closed` is its promise (close is idempotent). */
  let closing = false;
  let closed: Promise<void> | undefined;
  let restartTimer: NodeJS.Timeout | undefined;
  let restarts = 0;
  /** incrementalRebalance: a rebalance started; everything is revoked if no assignment follows in time. */
  let holdTimer: NodeJS.Timeout | undefined;
  const holdMs = o.config.rebalanceTimeout ?? 60_000;

  function endHold(): void {
    if (holdTimer) clearTimeout(holdTimer);
    holdTimer = undefined;
  }

  /** Ownership changes run one after another, in the order kafkajs reported them. */
  function enqueue(step: () => Promise<void>): Promise<void> {
    listeners = listeners.then(step);
    return listeners;
  }

  function revokeAll(): Promise<void> {
    return revoke([...owned]);
  }

  function revoke(partitions: readonly number[]): Promise<void> {
    const lost = [...partitions].sort((a, b) => a - b);
    for (const p of lost) {
      owned.delete(p);
      assigned.delete(p);
    }
    if (lost.length === 0) return listeners;
    return enqueue(() => notifyListener(o.options.onRevoke && (() => o.options.onRevoke?.(lost))));
  }

  function assign(partitions: readonly number[]): Promise<void> {
    const gained = [...partitions].sort((a, b) => a - b);
    for (const p of gained) owned.add(p);
    if (gained.length === 0) return listeners;
    const done = enqueue(() => notifyListener(o.options.onAssign && (() => o.options.onAssign?.(gained))));
    for (const p of gained) assigned.set(p, done);
    return done;
  }

  async function handleWithRetry(payload: EachMessagePayload, instance: KafkaConsumer): Promise<void> {
    const message = fromKafkaMessage(payload.topic, payload.partition, payload.message);
    for (let attempt = 0; ; attempt++) {
      if (closing) return;
      try {
        await o.options.handle(message);
        break;
      } catch {
        if (closing) return;
        await sleep(backoffDelay(HANDLE_RETRY, attempt));
        // Throws a kafkajs error when the group is rebalancing: kafkajs rejoins, and the message
        // (uncommitted) goes to the partition's next owner.
        await payload.heartbeat();
      }
    }
    await instance.commitOffsets([{ topic: payload.topic, partition: payload.partition, offset: (message.offset + 1n).toString() }]);
  }

  async function launch(): Promise<void> {
    // Incremental: the sticky assigner keeps what members own, so a rebalance moves only a share.
    const config: ConsumerConfig = o.options.incrementalRebalance
      ? { ...o.config, partitionAssigners: [stickyAssigner(() => ({ [topic]: [...owned] })), PartitionAssigners.roundRobin] }
      : o.config;
    const instance = o.kafka.consumer(config);
    consumer = instance;
    const { GROUP_JOIN, REBALANCING, CRASH } = instance.events;

    instance.on(GROUP_JOIN, ({ payload }) => {
      if (instance !== consumer) return;
      endHold();
      const next = new Set(payload.memberAssignment[topic] ?? []);
      void revoke([...owned].filter((p) => !next.has(p)));
      void assign([...next].filter((p) => !owned.has(p)));
    });
    instance.on(REBALANCING, () => {
      if (instance !== consumer) return;
      if (!o.options.incrementalRebalance) {
        void revokeAll();
        return;
      }
      holdTimer ??= setTimeout(() => {
        holdTimer = undefined;
        if (instance === consumer) void revokeAll();
      }, holdMs);
    });
    instance.on(CRASH, ({ payload }) => {
      if (instance !== consumer) return;
      endHold();
      void revokeAll();
      o.onCrash?.({ topic, groupId, error: payload.error, restartedByKafkajs: payload.restart });
      if (!payload.restart && !closing) scheduleRestart(instance);
    });

    await instance.connect();
    await instance.subscribe({ topics: [topic], fromBeginning: o.options.fromBeginning !== false });
    await instance.run({
      autoCommit: false,
      partitionsConsumedConcurrently: o.concurrency,
      eachMessage: async (payload) => {
        if (closing) return; // not handled, not committed: the next owner gets it
        await assigned.get(payload.partition);
        const run = handleWithRetry(payload, instance);
        inflight.add(run);
        try {
          await run;
        } finally {
          inflight.delete(run);
        }
      },
    });
    restarts = 0;
  }

  function scheduleRestart(crashed: KafkaConsumer): void {
    const delay = backoffDelay(RESTART_BACKOFF, restarts);
    restarts += 1;
    restartTimer = setTimeout(() => {
      restartTimer = undefined;
      if (closing) return;
      void crashed
        .disconnect()
        .catch(() => undefined)
        .then(() => (closing ? undefined : launch()))
        .catch((error: unknown) => {
          const err = error instanceof Error ? error : new Error(String(error));
          o.onCrash?.({ topic, groupId, error: err, restartedByKafkajs: false });
          if (!closing && consumer) scheduleRestart(consumer);
        });
    }, delay);
  }

  async function close(): Promise<void> {
    closing = true;
    endHold();
    if (restartTimer) clearTimeout(restartTimer);
    const instance = consumer;
    try {
      instance?.pause([{ topic }]);
    } catch {
      // not running (crashed or restarting): nothing is fetched anyway
    }
    await Promise.allSettled([...inflight]);
    await revokeAll();
    await instance?.disconnect();
    o.onClosed();
  }

  await launch();
  // The first GROUP_JOIN has been emitted when run() resolved: let its onAssign finish.
  await listeners;
  return {
    close: () => (closed ??= close()),
  };
}
