/**
 * A processor (processor.ts) for instances that split the work by bus partition: it handles
 * only the events of partitions this instance owns, and keeps one checkpoint per partition
 * (`processor:<name>:p<n>`), so a partition's position moves with the partition. The instance
 * that gains a partition resumes it where its last owner stood, a restarted instance where it
 * stood itself; neither jumps to another instance's position, which would skip the events the
 * other had no business handling (docs/decisions/0124-work-scoped-to-owned-partitions.md).
 *
 * One subscription serves every owned partition, from the lowest of their positions; an event
 * at or below its partition's position is not handled again. A partition gained behind the
 * subscription makes it read again from there. A partition's position advances only past
 * batches handled entirely while it was owned (one ownership period = one claim), so a
 * revoke in the middle of a batch never stores a position past an event nobody handled.
 */
import type { RecordedDomainEvent } from '../../domain/recorded.js';
import { toDomainEvent } from '../../domain/recorded.js';
import type { RecordedEvent, Subscription } from '../../ports/event-store.js';
import { retry, sleep, type Backoff } from '../../lib/backoff.js';
import type { Ownership } from './ownership.js';
import { checkpointName, HANDLER_RETRY, untilCaughtUp, type Processor, type ProcessorOptions } from '../upkeep/processor.js';

export interface OwnedProcessor extends Processor {
  /** Partitions this instance now owns: their checkpoints are read and their events handled from there. */
  assigned(partitions: readonly number[]): Promise<void>;
  /** Partitions no longer owned: their events are left alone at once, their positions stored. */
  revoked(partitions: readonly number[]): void;
}

export interface OwnedProcessorOptions extends Omit<ProcessorOptions, 'handleBatch'> {
  handle(event: RecordedDomainEvent): Promise<void>;
  ownership: Pick<Ownership, 'ownsPartition'>;
  /** The bus partition an event's work belongs to (a task event: its task id's). */
  partitionOf(event: RecordedEvent): number;
}

/** One period of ownership of a partition: replaced, never reused, when it is assigned again. */
interface Claim {
  position: bigint;
  stored: bigint;
}

/** Between tries of reading a gained partition's checkpoint: 200 ms doubling, at most 10 s. */
const CHECKPOINT_READ_RETRY: Backoff = { initialMs: 200, maxMs: 10_000 };
/**
 * Every owned partition's position is stored at least this often while events pass; a partition
 * whose events a batch handled, right after that batch (a crash after that repeats none of them).
 */
const STORE_EVERY_MS = 1000;

export function createOwnedProcessor(o: OwnedProcessorOptions): OwnedProcessor {
  const claims = new Map<number, Claim>();
  let subscription: Subscription | undefined;
  /** Where the current subscription has read to (undefined: none open). */
  let readingAt: bigint | undefined;
  let loop: Promise<void> | undefined;
  let stopped = true;
  let lastPass: Date | undefined;
  let lastStored = 0;
  let idleTimer: NodeJS.Timeout | undefined;
  /** Wakes the loop when it waits for a first partition. */
  let wake: (() => void) | undefined;
  /** Positions of revoked partitions being stored, by partition. */
  const storing = new Map<number, Promise<void>>();

  const lowest = (): bigint | undefined =>
    [...claims.values()].reduce<bigint | undefined>((m, c) => (m === undefined || c.position < m ? c.position : m), undefined);

  async function store(partition: number, claim: Claim): Promise<void> {
    const position = claim.position;
    if (position <= claim.stored) return;
    await o.views.commit(checkpointName(o.name, partition), [], position);
    if (position > claim.stored) claim.stored = position;
  }
  function storeBeside(partition: number, claim: Claim): void {
    const run = store(partition, claim).catch((err: unknown) => o.log.error({ err, partition }, 'storing a revoked partition position failed'));
    storing.set(partition, run);
    void run.finally(() => {
      if (storing.get(partition) === run) storing.delete(partition);
    });
  }

  function handleIfOwned(event: RecordedDomainEvent, partition: number, claim: Claim): Promise<void> {
    return retry(
      async () => {
        // Revoked since the batch began (or on an earlier try): the partition's new owner handles it.
        if (claims.get(partition) !== claim || !o.ownership.ownsPartition(partition)) return;
        await o.handle(event);
      },
      {
        backoff: HANDLER_RETRY,
        retryIf: () => !stopped,
        onRetry: (err, attempt) => o.log.error({ err, what: `${event.type} ${event.id}`, attempt }, 'handler failed; retrying'),
      },
    );
  }

  /** Resolves with the partitions whose events it handled. */
  async function handleBatch(raw: readonly RecordedEvent[]): Promise<Set<number>> {
    // The claims this batch works for: one gained meanwhile is read again from its own position.
    const batch = new Map(claims);
    const work: (() => Promise<void>)[] = [];
    const handled = new Set<number>();
    for (const r of raw) {
      const partition = o.partitionOf(r);
      const claim = batch.get(partition);
      if (!claim || r.position <= claim.position) continue;
      const event = toDomainEvent(r);
      if (!event || !o.handles.includes(event.type)) continue;
      work.push(() => handleIfOwned(event, partition, claim));
      handled.add(partition);
    }
    const limit = o.concurrency ?? 32;
    for (let i = 0; i < work.length; i += limit) await Promise.all(work.slice(i, i + limit).map((w) => w()));
    const end = raw[raw.length - 1]!.position;
    for (const [partition, claim] of batch) if (claims.get(partition) === claim && claim.position < end) claim.position = end;
    return handled;
  }

  async function storeOwned(only?: ReadonlySet<number>): Promise<void> {
    await Promise.all([...claims].filter(([partition]) => !only || only.has(partition)).map(([partition, claim]) => store(partition, claim)));
    if (!only) lastStored = Date.now();
  }

  async function run(): Promise<void> {
    while (!stopped) {
      const from = lowest();
      if (from === undefined) {
        // Owning nothing: nothing to read until a partition is gained.
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
        continue;
      }
      const current = o.events.subscribe({ after: from, streamPrefixes: o.streamPrefixes, batchSize: 500 });
      subscription = current;
      readingAt = from;
      try {
        for await (const raw of current) {
          const handled = await handleBatch(raw);
          readingAt = raw[raw.length - 1]!.position;
          if (Date.now() - lastStored >= STORE_EVERY_MS) await storeOwned();
          else if (handled.size > 0) await storeOwned(handled);
          lastPass = o.clock();
          // A partition gained behind this subscription (or all of them revoked): read anew.
          const low = lowest();
          if (low === undefined || low < readingAt) break;
        }
      } catch (err) {
        if (stopped) return;
        o.log.error({ err }, 'processor subscription failed; resubscribing');
        await sleep(500);
      } finally {
        await current.close();
        subscription = undefined;
        readingAt = undefined;
      }
    }
  }

  async function firstPosition(partition: number): Promise<bigint> {
    const own = await o.views.getCheckpoint(checkpointName(o.name, partition));
    if (own !== undefined) return own;
    // Never owned since per-partition checkpoints: the one checkpoint the processor kept before.
    const shared = await o.views.getCheckpoint(checkpointName(o.name));
    if (shared !== undefined) return shared;
    return o.startAt === 'head' ? o.events.headPosition() : 0n;
  }

  async function claim(partition: number): Promise<void> {
    // Given back and gained again (kafkajs revokes everything on each rebalance): what this
    // instance handled before is stored first, so it is not handled again.
    await storing.get(partition);
    const position = await retry(() => firstPosition(partition), {
      backoff: CHECKPOINT_READ_RETRY,
      // Not `stopped`: a processor that starts after the ownership (the dispatcher) is told first.
      retryIf: () => o.ownership.ownsPartition(partition),
      onRetry: (err, attempt) => o.log.error({ err, partition, attempt }, 'reading a partition checkpoint failed; retrying'),
    });
    // Revoked while the checkpoint was read, or claimed by a concurrent assignment.
    if (!o.ownership.ownsPartition(partition) || claims.has(partition)) return;
    claims.set(partition, { position, stored: position });
    // Behind what the subscription has read: it reads again from there.
    if (readingAt !== undefined && position < readingAt) closeSubscription();
    wake?.();
  }

  /**
   * Ends the subscription's reading (the loop reads again from where it must). Not awaited: a
   * store whose close fails (a lost connection) must not leave a rejection nobody handles.
   */
  function closeSubscription(): void {
    subscription?.close().catch((err: unknown) => o.log.warn({ err }, 'closing the subscription failed'));
  }

  async function idleCheck(): Promise<void> {
    const from = lowest();
    if (from === undefined) {
      lastPass = o.clock();
      return;
    }
    const [next] = await o.events.readAll({ after: from, maxCount: 1, streamPrefixes: o.streamPrefixes });
    if (!next) lastPass = o.clock();
  }

  return {
    name: o.name,
    lastPass: () => lastPass,
    async assigned(partitions) {
      await Promise.all(partitions.map((p) => claim(p).catch((err: unknown) => o.log.error({ err, partition: p }, 'gaining a partition failed'))));
    },
    revoked(partitions) {
      for (const p of partitions) {
        const c = claims.get(p);
        if (!c) continue;
        claims.delete(p);
        // What this owner finished is kept: the next owner resumes from at least there.
        storeBeside(p, c);
      }
      if (claims.size === 0) closeSubscription();
    },
    async start() {
      stopped = false;
      loop = run();
      void idleCheck().catch(() => undefined);
      idleTimer = setInterval(() => void idleCheck().catch(() => undefined), 2000);
      idleTimer.unref();
    },
    async stop() {
      stopped = true;
      if (idleTimer) clearInterval(idleTimer);
      wake?.();
      await subscription?.close();
      await loop?.catch(() => undefined);
      await storeOwned().catch((err: unknown) => o.log.error({ err }, 'storing partition positions on stop failed'));
      await Promise.allSettled([...storing.values()]);
    },
    // Caught up when every owned partition's position is.
    caughtUp: (position, timeoutMs = 10_000) => untilCaughtUp(o, lowest, position, timeoutMs),
  };
}
