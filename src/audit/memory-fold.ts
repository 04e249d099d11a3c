/**
 * The in-memory half of a rebuild (rebuild.ts): every projection folds the events into a Map of
 * its documents keyed by id; each event is typed once for all projections and no document is
 * read back from the view store. What it ends with is what the projection runner would have
 * written (projections/runner.ts): per document the newest doc, or the tombstone of a delete,
 * with the position of the last event that changed it; and, as every projection's checkpoint,
 * the position of the last event folded.
 *
 * Memory is bounded by `maxDocuments` (documents and tombstones held, across projections): past
 * it, the documents touched longest ago are written out (`ViewStore.bulkLoad`, no checkpoint)
 * and forgotten. From then on a document of that projection that is not in memory is read back
 * from the store before an event is folded into it, as the runner reads it, so the result is
 * the same; a store that fits the bound is never read back.
 */
import type { Logger } from 'pino';
import { toDomainEvent, type RecordedDomainEvent } from '../domain/recorded.js';
import type { RecordedEvent } from '../ports/event-store.js';
import type { ViewStore, ViewWrite } from '../ports/view-store.js';
import type { Projection } from '../../projections/projection.js';

/** Documents per bulkLoad transaction: large enough to amortise it, small enough to bound the batch of JSON it serialises. */
const LOAD_CHUNK = 20_000;

class Entry {
  constructor(
    public position: bigint,
    /** null: deleted (a tombstone, as the runner writes it). */
    public doc: unknown,
    /** The page that last folded an event into it: documents touched longest ago are written out first. */
    public touched: number,
  ) {}
}

interface ProjectionFold {
  readonly projection: Projection;
  readonly docs: Map<string, Entry>;
  /** Documents were written out before the end: those not in memory may be in the store. */
  spilled: boolean;
}

export interface MemoryFold {
  /** Folds one page of events, in position order; writes documents out first when over the bound. */
  fold(events: readonly RecordedEvent[]): Promise<void>;
  /** Position of the last event folded: the checkpoint the runner would have after the same events. */
  position(): bigint | undefined;
  /** Writes every document still held, then each projection's checkpoint; frees the memory. */
  flush(): Promise<void>;
  /** Most documents held at once. */
  peakDocuments(): number;
}

export function createMemoryFold(deps: { views: ViewStore; log: Logger }, projections: readonly Projection[], maxDocuments: number): MemoryFold {
  const { views, log } = deps;
  const folds: ProjectionFold[] = projections.map((projection) => ({ projection, docs: new Map(), spilled: false }));
  /** Which projections handle each event type, in the runner's order. */
  const byType = new Map<string, ProjectionFold[]>();
  for (const fold of folds) {
    for (const type of new Set(fold.projection.handles)) {
      const list = byType.get(type) ?? [];
      list.push(fold);
      byType.set(type, list);
    }
  }
  let page = 0;
  let held = 0;
  let peak = 0;
  let last: bigint | undefined;

  function foldOne(fold: ProjectionFold, event: RecordedDomainEvent): void {
    const { projection, docs } = fold;
    const id = projection.documentId(event);
    if (id === undefined) return;
    const entry = docs.get(id);
    let next: unknown;
    try {
      next = projection.evolve(entry === undefined || entry.doc === null ? undefined : entry.doc, event);
    } catch (err) {
      log.warn({ err, projection: projection.name, eventId: event.id, type: event.type }, 'projection skipped an event it could not fold');
      return;
    }
    if (next === undefined) return;
    if (entry) {
      entry.position = event.position;
      entry.doc = next;
      entry.touched = page;
    } else {
      docs.set(id, new Entry(event.position, next, page));
      held++;
    }
  }

  /** For projections that wrote documents out: the ones this page needs, read back as the runner would. */
  async function readBack(events: readonly RecordedDomainEvent[]): Promise<void> {
    const missing = new Map<ProjectionFold, Set<string>>();
    for (const event of events) {
      for (const fold of byType.get(event.type) ?? []) {
        if (!fold.spilled) continue;
        const id = fold.projection.documentId(event);
        if (id === undefined || fold.docs.has(id)) continue;
        const ids = missing.get(fold) ?? new Set<string>();
        ids.add(id);
        missing.set(fold, ids);
      }
    }
    for (const [fold, ids] of missing) {
      for (const stored of await views.getMany(fold.projection.view, [...ids])) {
        fold.docs.set(stored.id, new Entry(stored.position, stored.doc, page));
        held++;
      }
    }
  }

  async function write(fold: ProjectionFold, entries: Iterable<[string, Entry]>, checkpoint: bigint | undefined): Promise<void> {
    const { name, view } = fold.projection;
    let chunk: ViewWrite[] = [];
    for (const [id, entry] of entries) {
      chunk.push({ view, id, position: entry.position, doc: entry.doc });
      if (chunk.length === LOAD_CHUNK) {
        await views.bulkLoad(name, chunk, undefined);
        chunk = [];
      }
    }
    if (chunk.length > 0 || checkpoint !== undefined) await views.bulkLoad(name, chunk, checkpoint);
  }

  /** Writes out the documents touched longest ago until half the bound is held. */
  async function spill(): Promise<void> {
    const perPage = new Array<number>(page + 1).fill(0);
    for (const fold of folds) for (const entry of fold.docs.values()) perPage[entry.touched]! += 1;
    let cutoff = 0;
    let evicted = perPage[0]!;
    while (held - evicted > maxDocuments / 2 && cutoff < page) {
      cutoff++;
      evicted += perPage[cutoff]!;
    }
    for (const fold of folds) {
      const out: [string, Entry][] = [];
      for (const item of fold.docs) if (item[1].touched <= cutoff) out.push(item);
      if (out.length === 0) continue;
      await write(fold, out, undefined);
      for (const [id] of out) fold.docs.delete(id);
      held -= out.length;
      fold.spilled = true;
    }
  }

  return {
    async fold(events) {
      if (events.length === 0) return;
      page++;
      const typed: RecordedDomainEvent[] = [];
      for (const raw of events) {
        const event = toDomainEvent(raw);
        if (event && byType.has(event.type)) typed.push(event);
      }
      await readBack(typed);
      for (const event of typed) for (const fold of byType.get(event.type)!) foldOne(fold, event);
      last = events[events.length - 1]!.position;
      if (held > peak) peak = held;
      if (held > maxDocuments) await spill();
    },
    position: () => last,
    async flush() {
      for (const fold of folds) {
        await write(fold, fold.docs, last);
        held -= fold.docs.size;
        fold.docs.clear();
      }
    },
    peakDocuments: () => peak,
  };
}
