/**
 * Poller: follows every task that runs upstream. Polls on the family's interval, backs off
 * exponentially with jitter on errors, limits polls in flight per channel, appends only
 * changes, re-hosts results on success, and fails tasks older than the family's max age.
 * The in-flight set is rebuilt from the `inflight` view on start.
 */
import type { Logger } from 'pino';
import type { KnownTask } from '../domain/task.js';
import type { AssetStore } from '../ports/asset-store.js';
import type { EventMetadata, EventStore } from '../ports/event-store.js';
import type { AssetSigner } from './assets.js';
import { rehostResults } from './assets.js';
import { guardedDownload, type OutboundPolicy } from './outbound-guard.js';
import type { Catalog } from './catalog.js';
import { Semaphore } from './semaphore.js';
import { executeTask, readTask } from './task-commands.js';
import { resolveBaseUrl, upstreamModelOf, type UpstreamRegistry, type UpstreamStatus } from './upstream.js';

export interface PollerDeps {
  events: EventStore;
  assets: AssetStore;
  signer: AssetSigner;
  catalog: Catalog;
  upstreams: UpstreamRegistry;
  log: Logger;
  selfUrl: () => string;
  clock: () => Date;
  assetRetentionSeconds: number;
  pollIntervalMs?: number;
  maxAgeSeconds?: number;
  channelConcurrency: number;
  /** The outbound URL policy for result downloads from a channel (its origin is trusted). */
  outbound: (channelBaseUrl: string) => OutboundPolicy;
}

interface Tracked {
  task: KnownTask;
  /** Revision of the task stream as last seen (saves a read per change). */
  revision: number | undefined;
  errors: number;
  timer?: NodeJS.Timeout;
}

export interface Poller {
  track(task: KnownTask, revision?: number): void;
  /** Stops following the tasks that match (their partition moved to another instance). */
  untrackWhere(matches: (taskId: string) => boolean): void;
  size(): number;
  stop(): Promise<void>;
}

export function createPoller(deps: PollerDeps): Poller {
  const tracked = new Map<string, Tracked>();
  const limits = new Map<string, Semaphore>();
  const running = new Set<Promise<void>>();
  let stopped = false;

  const limitOf = (channelId: string) => {
    let s = limits.get(channelId);
    if (!s) limits.set(channelId, (s = new Semaphore(deps.channelConcurrency)));
    return s;
  };
  const nowSeconds = () => Math.floor(deps.clock().getTime() / 1000);
  const meta = (t: KnownTask): EventMetadata => ({ at: deps.clock().toISOString(), accountId: t.accountId, correlationId: t.taskId });

  function schedule(entry: Tracked, delayMs: number): void {
    if (stopped) return;
    entry.timer = setTimeout(() => {
      const p = pollOnce(entry).catch((err: unknown) => {
        deps.log.error({ err, taskId: entry.task.taskId }, 'poll failed unexpectedly');
        entry.errors++;
        schedule(entry, backoff(entry));
      });
      running.add(p);
      void p.finally(() => running.delete(p));
    }, delayMs);
  }

  function intervalOf(task: KnownTask): number {
    const channel = task.channelId ? deps.catalog.channel(task.channelId) : undefined;
    const adapter = channel ? deps.upstreams.get(channel.family) : undefined;
    return deps.pollIntervalMs ?? adapter?.pollIntervalMs ?? 2000;
  }

  /** Exponential backoff with full jitter, capped at a minute. */
  function backoff(entry: Tracked): number {
    const base = Math.min(intervalOf(entry.task) * 2 ** entry.errors, 60_000);
    return base / 2 + Math.random() * (base / 2);
  }

  async function finish(entry: Tracked, status: UpstreamStatus): Promise<void> {
    const t = entry.task;
    const known = entry.revision === undefined ? undefined : { state: entry.task, revision: entry.revision };
    if (status.state === 'succeeded') {
      const channel = deps.catalog.channel(t.channelId!)!;
      const adapter = deps.upstreams.get(channel.family)!;
      const assetsExpireAt = nowSeconds() + deps.assetRetentionSeconds;
      const baseUrl = resolveBaseUrl(channel.baseUrl, deps.selfUrl());
      const results = await rehostResults(
        {
          assets: deps.assets,
          signer: deps.signer,
          resolveUrl: (u) => (u.startsWith('/') ? new URL(baseUrl).origin + u : u),
          fetchBytes: (u) => guardedDownload(u, deps.outbound(baseUrl)),
        },
        t.taskId,
        status.results,
        adapter.delivery(t),
        assetsExpireAt,
      );
      await executeTask(deps.events, t.taskId, {
        type: 'CompleteTask',
        data: { results, usage: status.usage, ...(status.snapshot ? { upstream: status.snapshot } : {}), assetsExpireAt: results.some((r) => r.assetKey) ? assetsExpireAt : 0, completedAt: nowSeconds() },
      }, meta(t), known);
    } else if (status.state === 'failed') {
      await executeTask(deps.events, t.taskId, { type: 'FailTask', data: { code: status.code, reason: status.reason, completedAt: nowSeconds() } }, meta(t), known);
    } else if (status.state === 'lost') {
      await executeTask(deps.events, t.taskId, { type: 'FailTask', data: { code: 'upstream_task_lost', reason: status.reason, completedAt: nowSeconds() } }, meta(t), known);
    }
    tracked.delete(t.taskId);
  }

  async function pollOnce(entry: Tracked): Promise<void> {
    if (stopped || !tracked.has(entry.task.taskId)) return;
    const t = entry.task;
    const channel = t.channelId ? deps.catalog.channel(t.channelId) : undefined;
    const adapter = channel ? deps.upstreams.get(channel.family) : undefined;
    if (!channel || !adapter || !t.upstreamTaskId) {
      await finish(entry, { state: 'lost', reason: `channel ${t.channelId} is gone` });
      return;
    }
    const maxAge = deps.maxAgeSeconds ?? adapter.maxAgeSeconds;
    if (nowSeconds() - t.createdAt > maxAge) {
      await executeTask(deps.events, t.taskId, { type: 'FailTask', data: { code: 'timeout', reason: `no result within ${maxAge} s`, completedAt: nowSeconds() } }, meta(t));
      tracked.delete(t.taskId);
      return;
    }
    let status: UpstreamStatus;
    try {
      status = await limitOf(channel.channelId).run(() =>
        adapter.poll({ channel, baseUrl: resolveBaseUrl(channel.baseUrl, deps.selfUrl()), upstreamModel: upstreamModelOf(channel, t.model), task: t, upstreamTaskId: t.upstreamTaskId! }),
      );
    } catch (err) {
      entry.errors++;
      deps.log.warn({ taskId: t.taskId, errors: entry.errors, reason: err instanceof Error ? err.message : String(err) }, 'poll error; backing off');
      schedule(entry, backoff(entry));
      return;
    }
    entry.errors = 0;
    if (status.state === 'queued' || status.state === 'in_progress') {
      const result = await executeTask(deps.events, t.taskId, {
        type: 'RecordProgress',
        data: { status: status.state, progress: Math.max(0, Math.min(100, Math.round(status.progress))), ...(status.snapshot ? { upstream: status.snapshot } : {}) },
      }, meta(t), entry.revision === undefined ? undefined : { state: entry.task, revision: entry.revision });
      if (result.state.status !== 'none') entry.task = result.state;
      entry.revision = result.revision;
      if (result.state.final) {
        tracked.delete(t.taskId);
        return;
      }
      schedule(entry, intervalOf(entry.task));
      return;
    }
    await finish(entry, status);
  }

  return {
    track(task, revision) {
      if (stopped || task.final || tracked.has(task.taskId)) return;
      const entry: Tracked = { task, revision, errors: 0 };
      tracked.set(task.taskId, entry);
      schedule(entry, intervalOf(task));
    },
    untrackWhere(matches) {
      for (const [taskId, entry] of tracked) {
        if (!matches(taskId)) continue;
        clearTimeout(entry.timer);
        tracked.delete(taskId);
      }
    },
    size: () => tracked.size,
    async stop() {
      stopped = true;
      for (const entry of tracked.values()) clearTimeout(entry.timer);
      await Promise.allSettled([...running]);
    },
  };
}

/** Loads a task's current state for tracking (used when rebuilding the in-flight set). */
export async function loadTracked(events: EventStore, taskId: string): Promise<KnownTask | undefined> {
  const { state } = await readTask(events, taskId);
  return state.status === 'none' || state.final ? undefined : state;
}
