/**
 * What every part of the engine takes from the composition root: the stores, the catalog, a
 * logger, the gateway's own address and a clock. Request-time work (tasks/request-deps.ts) and
 * the upstream side (the dispatcher, the poller and its recording) extend it; the task engine,
 * which wires them, takes both.
 */
import type { Logger } from 'pino';
import type { AssetStore } from '../ports/asset-store.js';
import type { EventStore } from '../ports/event-store.js';
import type { Catalog } from './channels/catalog.js';
import type { UpstreamRegistry } from './channels/upstream.js';

export interface EngineDeps {
  events: EventStore;
  /** Where results are re-hosted and the submit stored a task's large inline inputs. */
  assets: AssetStore;
  catalog: Catalog;
  log: Logger;
  /** The address this gateway calls itself at (known once it listens). */
  selfUrl: () => string;
  /** Injected so tests can move time; never call Date.now() in engine logic. */
  clock: () => Date;
}

/** What working with the upstreams adds: their adapters, and the tasks' maximum age. */
export interface UpstreamDeps extends EngineDeps {
  upstreams: UpstreamRegistry;
  /** Overrides every family's maximum task age (TASK_MAX_AGE_SECONDS). */
  maxAgeSeconds?: number;
}
