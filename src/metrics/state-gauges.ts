/**
 * Gauges read at scrape time from what the instance already keeps: the tasks its poller
 * follows, the store-wide in-flight view, and how far its views are behind the event log.
 * A source that does not answer leaves its gauge at the last value read (and is logged):
 * one slow store does not fail the whole scrape.
 */
import type { Logger } from 'pino';
import { Counter, Gauge } from 'prom-client';
import type { ProjectionRunner } from '../../projections/runner.js';
import { gatewayStreamPrefixes } from '../domain/events.js';
import type { ChannelHealth } from '../engine/channels/channel-health.js';
import type { Poller } from '../engine/dispatch/poller.js';
import type { SubmitWindowCounts } from '../engine/dispatch/submit-lease-memory.js';
import type { EventStore } from '../ports/event-store.js';
import type { ViewStore } from '../ports/view-store.js';
import type { GatewayMetrics } from './registry.js';
import { VIEWS } from '../../projections/views.js';

export interface StateSources {
  events: EventStore;
  views: ViewStore;
  /** This instance's views (the projections it runs, or the checkpoints it follows). */
  runner: ProjectionRunner;
  /** Present where the engine runs (roles `all`, `worker`). */
  poller?: Poller | undefined;
  /** Present where the engine runs: what its dispatcher counted of the submit lease's window. */
  submitWindow?: (() => Readonly<SubmitWindowCounts>) | undefined;
  /** This instance's circuit breakers, one per channel it has tried (its own view: per process). */
  channelHealth?: ChannelHealth | undefined;
  /** A channel's name, for the `channel_name` label beside its id ('' for one no longer known). */
  channelName?: ((channelId: string) => string | undefined) | undefined;
  /** Whether to report the store-wide in-flight view (roles `all`, `projector`: once per deployment). */
  inflightView: boolean;
  log: Logger;
}

export function registerStateGauges(metrics: GatewayMetrics, sources: StateSources): void {
  const { events, views, runner, poller, log } = sources;
  const registers = [metrics.registry];
  const guarded = async (what: string, read: () => Promise<void>) => {
    try {
      await read();
    } catch (err) {
      log.warn({ err, gauge: what }, 'a metrics gauge could not be read');
    }
  };

  if (poller) {
    new Gauge({
      name: 'gateway_poller_tasks',
      help: 'Tasks this instance follows upstream (dispatched, not yet ended).',
      registers,
      collect() {
        this.set(poller.size());
      },
    });
  }
  if (sources.submitWindow) {
    const counts = sources.submitWindow;
    new Counter({
      name: 'gateway_submit_lease_window_total',
      help:
        'Where a task may have reached its upstream twice, met by this instance: claimed_over_open (a submit lease taken over an open one, whose submit may have ' +
        'reached the upstream; sent again with the same Idempotency-Key), orphaned_job (an upstream job whose record was fenced: another instance holds the task).',
      labelNames: ['event'],
      registers,
      collect() {
        const c = counts();
        this.reset();
        this.inc({ event: 'claimed_over_open' }, c.claimedOverOpen);
        this.inc({ event: 'orphaned_job' }, c.orphaned);
      },
    });
  }
  if (sources.channelHealth) {
    const health = sources.channelHealth;
    new Gauge({
      name: 'gateway_channel_circuit_open',
      help: "This instance's circuit breaker per channel: 0 closed, 0.5 half-open (one trial let through), 1 open (the channel is skipped).",
      labelNames: ['channel', 'channel_name'],
      registers,
      collect() {
        this.reset();
        for (const c of health.snapshot()) {
          this.set(
            { channel: c.channelId, channel_name: sources.channelName?.(c.channelId) ?? '' },
            c.state === 'open' ? 1 : c.state === 'half_open' ? 0.5 : 0,
          );
        }
      },
    });
  }
  if (sources.inflightView) {
    new Gauge({
      name: 'gateway_tasks_in_flight',
      help: 'Tasks not yet ended, store-wide (the in-flight view), by stage: submitted (not yet upstream) or dispatched.',
      labelNames: ['stage'],
      registers,
      async collect() {
        await guarded('gateway_tasks_in_flight', async () => {
          for (const stage of ['submitted', 'dispatched'] as const) this.set({ stage }, await views.count(VIEWS.inflight, { stage }));
        });
      },
    });
  }
  new Gauge({
    name: 'gateway_projection_lag_seconds',
    help: "Age of the oldest event this instance's views do not show yet (0: they show everything).",
    registers,
    async collect() {
      await guarded('gateway_projection_lag_seconds', async () => {
        const [next] = await events.readAll({ after: runner.position(), maxCount: 1, streamPrefixes: gatewayStreamPrefixes });
        this.set(next ? Math.max(0, Date.now() - Date.parse(next.metadata.at)) / 1000 : 0);
      });
    },
  });
}
