/**
 * Runs projections from one catch-up subscription. Each batch of events is folded into the
 * affected documents of every projection, and each projection's writes commit together with
 * its checkpoint. Documents are guarded by position in the ViewStore, so a replay is harmless.
 */
import type { Logger } from 'pino';
import { gatewayStreamPrefixes } from '../src/domain/events.js';
import { toDomainEvent, type RecordedDomainEvent } from '../src/domain/recorded.js';
import type { EventStore, RecordedEvent, Subscription } from '../src/ports/event-store.js';
import type { ProjectionWrites, ViewStore, ViewWrite } from '../src/ports/view-store.js';
import type { Projection } from './projection.js';
import { createFinalEventLags } from './final-event-lags.js';

export interface ProjectionRunner {
  start(): Promise<void>;
  /** Resolves once every projection has folded the event at `position` (read-your-writes). */
  waitFor(position: bigint, timeoutMs?: number): Promise<void>;
  /** Called after each committed batch with the writes that batch made. */
  onCommit(listener: (writes: readonly ViewWrite[]) => void): () => void;
  position(): bigint;
  /**
   * Projection lag of final task events: milliseconds from the event's decision (its
   * `metadata.at`) to the commit that made every view show it. A bounded sample, newest kept.
   */
  finalEventLags(): readonly number[];
  stop(): Promise<void>;
}

export class ProjectionLagError extends Error {
  constructor(
    readonly position: bigint,
    readonly reached: bigint,
  ) {
    super(`projections did not reach position ${position} in time (at ${reached})`);
  }
}

interface Waiter {
  position: bigint;
  resolve(): void;
}

export function createProjectionRunner(deps: {
  events: EventStore;
  views: ViewStore;
  projections: readonly Projection[];
  log: Logger;
  batchSize?: number;
}): ProjectionRunner {
  const { events, views, projections, log } = deps;
  const checkpoints = new Map<string, bigint>();
  let reached = 0n;
  let waiters: Waiter[] = [];
  const listeners = new Set<(writes: readonly ViewWrite[]) => void>();
  let subscription: Subscription | undefined;
  let loop: Promise<void> | undefined;
  let stopped = false;
  const lags = createFinalEventLags();

  function advance(position: bigint): void {
    reached = position;
    const ready = waiters.filter((w) => w.position <= position);
    waiters = waiters.filter((w) => w.position > position);
    for (const w of ready) w.resolve();
  }

  async function foldBatch(projection: Projection, batch: readonly RecordedDomainEvent[]): Promise<ViewWrite[]> {
    const from = checkpoints.get(projection.name) ?? 0n;
    const relevant = batch.filter((e) => e.position > from && projection.handles.includes(e.type));
    if (relevant.length === 0) return [];
    const ids = [...new Set(relevant.map((e) => projection.documentId(e)).filter((id): id is string => id !== undefined))];
    const stored = await views.getMany(projection.view, ids);
    const docs = new Map<string, { position: bigint; doc: unknown }>(stored.map((d) => [d.id, { position: d.position, doc: d.doc }]));
    const changed = new Map<string, ViewWrite>();
    for (const event of relevant) {
      const id = projection.documentId(event);
      if (id === undefined) continue;
      const current = docs.get(id);
      if (current && event.position <= current.position) continue;
      let next: unknown;
      try {
        next = projection.evolve(current?.doc ?? undefined, event);
      } catch (err) {
        log.warn({ err, projection: projection.name, eventId: event.id, type: event.type }, 'projection skipped an event it could not fold');
        continue;
      }
      if (next === undefined) continue;
      docs.set(id, { position: event.position, doc: next });
      changed.set(id, { view: projection.view, id, position: event.position, doc: next });
    }
    return [...changed.values()];
  }

  async function apply(raw: readonly RecordedEvent[]): Promise<void> {
    const batch = raw.map(toDomainEvent).filter((e): e is RecordedDomainEvent => e !== undefined);
    const last = raw[raw.length - 1]!.position;
    // Every projection behind `last` folds the batch, and all commit in one step.
    const due = projections.filter((projection) => (checkpoints.get(projection.name) ?? 0n) < last);
    const folded: ProjectionWrites[] = [];
    for (const projection of due) folded.push({ projection: projection.name, writes: await foldBatch(projection, batch) });
    if (folded.length > 0) await views.commitAll(folded, last);
    for (const projection of due) checkpoints.set(projection.name, last);
    const all = folded.flatMap((f) => f.writes);
    advance(last);
    lags.record(batch);
    if (all.length > 0) for (const l of listeners) l(all);
  }

  async function run(): Promise<void> {
    let backoff = 100;
    while (!stopped) {
      const from = projections.reduce((min, p) => {
        const c = checkpoints.get(p.name) ?? 0n;
        return c < min ? c : min;
      }, reached);
      subscription = events.subscribe({ after: from, streamPrefixes: gatewayStreamPrefixes, batchSize: deps.batchSize ?? 500 });
      try {
        for await (const batch of subscription) {
          await apply(batch);
          backoff = 100;
        }
      } catch (err) {
        if (stopped) return;
        log.error({ err }, 'projection subscription failed; resubscribing from checkpoint');
        await new Promise((r) => setTimeout(r, backoff));
        backoff = Math.min(backoff * 2, 5000);
      }
    }
  }

  return {
    async start() {
      for (const p of projections) checkpoints.set(p.name, (await views.getCheckpoint(p.name)) ?? 0n);
      const stored = [...checkpoints.values()];
      reached = stored.length ? stored.reduce((a, b) => (a < b ? a : b)) : 0n;
      loop = run();
    },
    waitFor(position, timeoutMs = 10_000) {
      if (position <= reached) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters = waiters.filter((w) => w !== waiter);
          reject(new ProjectionLagError(position, reached));
        }, timeoutMs);
        const waiter: Waiter = {
          position,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        };
        waiters.push(waiter);
      });
    },
    onCommit(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    position: () => reached,
    finalEventLags: () => lags.sample(),
    async stop() {
      stopped = true;
      await subscription?.close();
      await loop;
    },
  };
}
