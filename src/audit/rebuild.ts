/**
 * Rebuilds views from scratch: drop every document of each view, fold every event up to the
 * head in memory (memory-fold.ts: each event read and typed once for all projections, no
 * document read back), write each document once (`ViewStore.bulkLoad`, no position guards, in
 * large transactions) with each projection's checkpoint at the last event folded, then hand
 * over to the projection runner from those checkpoints for whatever was appended meanwhile, and
 * return once the views show everything written before that hand-over.
 */
import type { Logger } from 'pino';
import { gatewayStreamPrefixes } from '../domain/events.js';
import type { EventStore } from '../ports/event-store.js';
import type { ViewStore } from '../ports/view-store.js';
import type { Projection } from '../../projections/projection.js';
import { createProjectionRunner } from '../../projections/runner.js';
import { waitForProjectedHead } from '../../projections/head.js';
import { createMemoryFold } from './memory-fold.js';

/** Events read per page. */
const PAGE = 5000;
/**
 * Documents (and tombstones) the fold holds before writing the oldest out: about 1 GB of heap
 * at the shapes of today's views; 1,000,000 traffic-shaped events make about 1.2 million.
 */
const DEFAULT_MAX_DOCUMENTS = 2_000_000;
const PROGRESS_EVERY_MS = 200;

export interface RebuildOptions {
  /** Bound of the documents held in memory (see memory-fold.ts). */
  maxDocuments?: number;
  /** Events read per page (default 5,000). */
  pageSize?: number;
}

export interface RebuildResult {
  /** The head the views show when it returns. */
  events: number;
  seconds: number;
  /** Most documents held in memory at once. */
  peakDocuments: number;
}

export async function rebuildViews(
  deps: { events: EventStore; views: ViewStore; log: Logger },
  projections: readonly Projection[],
  onProgress?: (position: number, head: number) => void,
  options: RebuildOptions = {},
): Promise<RebuildResult> {
  const { events, views } = deps;
  const started = Date.now();
  for (const p of projections) await views.reset(p.view, p.name);
  const head = await events.headPosition();
  const fold = createMemoryFold(deps, projections, options.maxDocuments ?? DEFAULT_MAX_DOCUMENTS);
  const pageSize = options.pageSize ?? PAGE;
  let reported = 0;
  for (let after = 0n; ;) {
    const page = await events.readAll({ after, maxCount: pageSize, streamPrefixes: gatewayStreamPrefixes });
    const upToHead = page.length > 0 && page[page.length - 1]!.position > head ? page.filter((e) => e.position <= head) : page;
    await fold.fold(upToHead);
    if (upToHead.length < pageSize) break;
    after = upToHead[upToHead.length - 1]!.position;
    if (onProgress && Date.now() - reported >= PROGRESS_EVERY_MS) {
      reported = Date.now();
      onProgress(Number(after), Number(head));
    }
    // The reads and the fold are synchronous: let timers and I/O of the process run between pages.
    await new Promise((resolve) => setImmediate(resolve));
  }
  await fold.flush();

  // Events appended since `head`: the runner takes over from the checkpoints just written.
  const runner = createProjectionRunner({ ...deps, projections, batchSize: 2000 });
  await runner.start();
  let reached = head;
  try {
    reached = await events.headPosition();
    await waitForProjectedHead(events, runner, 24 * 3600 * 1000);
  } finally {
    await runner.stop();
  }
  onProgress?.(Number(reached), Number(reached));
  return { events: Number(reached), seconds: (Date.now() - started) / 1000, peakDocuments: fold.peakDocuments() };
}
