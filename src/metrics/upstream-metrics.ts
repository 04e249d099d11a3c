/**
 * Upstream calls as metrics, by decorating the family adapters where the gateway is assembled:
 * the dispatcher, fail-over and poller call the decorated adapters unchanged. Synchronous calls
 * (the sync image routes) do not go through adapters and are not counted here; their time is
 * in the HTTP latency of their routes.
 */
import { UpstreamError, type UpstreamAdapter, type UpstreamContext, type UpstreamRegistry } from '../engine/channels/upstream.js';
import type { GatewayMetrics } from './registry.js';

type UpstreamMetrics = Pick<GatewayMetrics, 'upstreamCalls' | 'upstreamDuration'>;

/** The registry itself when metrics are off; otherwise every adapter decorated. */
export function instrumentUpstreams(upstreams: UpstreamRegistry, metrics: UpstreamMetrics | undefined): UpstreamRegistry {
  if (!metrics) return upstreams;
  return new Map([...upstreams].map(([family, adapter]) => [family, instrumentAdapter(adapter, metrics)]));
}

export function instrumentAdapter(adapter: UpstreamAdapter, metrics: UpstreamMetrics): UpstreamAdapter {
  return {
    ...adapter,
    submit: (ctx) =>
      timed(
        metrics,
        ctx,
        'submit',
        () => adapter.submit(ctx),
        () => 'ok',
      ),
    // A poll's outcome is what the upstream said of the task: queued, in_progress, succeeded, failed, lost.
    poll: (ctx) =>
      timed(
        metrics,
        ctx,
        'poll',
        () => adapter.poll(ctx),
        (status) => status.state,
      ),
  };
}

async function timed<T>(
  metrics: UpstreamMetrics,
  ctx: UpstreamContext,
  operation: 'submit' | 'poll',
  call: () => Promise<T>,
  outcomeOf: (result: T) => string,
): Promise<T> {
  const started = process.hrtime.bigint();
  const record = (outcome: string) => {
    const labels = { channel: ctx.channel.channelId, channel_name: ctx.channel.name, operation, outcome };
    metrics.upstreamCalls.inc(labels);
    metrics.upstreamDuration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
  };
  try {
    const result = await call();
    record(outcomeOf(result));
    return result;
  } catch (err) {
    record(failureOutcome(err, ctx));
    throw err;
  }
}

/** A refusal the next channel may take (`retryable_error`), one it may not (`error`), or the task's deadline (`aborted`). */
function failureOutcome(err: unknown, ctx: UpstreamContext): string {
  if (ctx.signal?.aborted) return 'aborted';
  if (err instanceof UpstreamError) return err.retryable ? 'retryable_error' : 'error';
  return 'error';
}
