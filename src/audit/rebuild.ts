/** Rebuilds views from scratch: drop every document of each view, then fold all events again. */
import type { Logger } from 'pino';
import type { EventStore } from '../ports/event-store.js';
import type { ViewStore } from '../ports/view-store.js';
import type { Projection } from '../../projections/projection.js';
import { createProjectionRunner } from '../../projections/runner.js';
import { waitForProjectedHead } from '../../projections/head.js';

export async function rebuildViews(
  deps: { events: EventStore; views: ViewStore; log: Logger },
  projections: readonly Projection[],
  onProgress?: (position: number, head: number) => void,
): Promise<{ events: number; seconds: number }> {
  for (const p of projections) await deps.views.reset(p.view, p.name);
  const head = await deps.events.headPosition();
  const runner = createProjectionRunner({ ...deps, projections, batchSize: 2000 });
  const started = Date.now();
  await runner.start();
  const timer = onProgress ? setInterval(() => onProgress(Number(runner.position()), Number(head)), 200) : undefined;
  try {
    await waitForProjectedHead(deps.events, runner, 24 * 3600 * 1000);
  } finally {
    if (timer) clearInterval(timer);
    await runner.stop();
  }
  onProgress?.(Number(head), Number(head));
  return { events: Number(head), seconds: (Date.now() - started) / 1000 };
}
