/**
 * Administration: the gateway at a glance — readiness (`/readyz`), the figures of
 * `/api/admin/metrics` (projection lag, tasks in flight, latency of final events, memory), the
 * channels' health where `/api/channel/` reports it, and the rate of events on the live stream
 * (an administrator's stream carries every account).
 *
 * The rate never claims more than the page saw: the stream cannot start at a time (only at a
 * position, or now), so until it has been open a minute the figure is the events since it opened,
 * and says so with how long ago that was.
 */
import { useEffect, useState } from 'preact/hooks';
import { get, plain } from '../api';
import { Badge, Card, ErrorLine } from '../components/ui';
import { bytes, ms, quota, time } from '../format';
import { useLoad } from '../load';
import { RECENT_MS, useLiveEvents, useLiveFeed } from '../live';
import type { Channel, Metrics, Readiness } from '../types';

const REFRESH_MS = 5000;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

function Figure(props: { label: string; value: string; hint?: string; testId?: string }) {
  return (
    <div class="figure" data-testid={props.testId}>
      <span class="figure-value">{props.value}</span>
      <span class="figure-label">{props.label}</span>
      {props.hint && <span class="figure-hint">{props.hint}</span>}
    </div>
  );
}

/**
 * Events the stream brought in the last minute, and of which kinds; `seconds`: how long the stream
 * has been open when that is less than a minute (the count covers only that), undefined once it
 * covers the whole minute.
 */
function useEventRate(): { count: number; tasks: number; billing: number; seconds: number | undefined } {
  const feed = useLiveFeed();
  const [, setTick] = useState(0);
  useLiveEvents(() => setTick((n) => n + 1));
  useEffect(() => {
    const timer = setInterval(() => setTick((n) => n + 1), 1000);
    return () => clearInterval(timer);
  }, []);
  const recent = feed.recent();
  const billing = recent.filter((e) => e.type.startsWith('Quota')).length;
  const openedAt = feed.openedAt();
  const open = openedAt === undefined ? 0 : Date.now() - openedAt;
  return { count: recent.length, tasks: recent.length - billing, billing, seconds: open < RECENT_MS ? Math.floor(open / 1000) : undefined };
}

export function AdminMetricsPage() {
  const metrics = useLoad(() => get<Metrics>('/api/admin/metrics'));
  const ready = useLoad(() => plain<Readiness>('/readyz'));
  const channels = useLoad(() => get<Channel[]>('/api/channel/'));
  const [updated, setUpdated] = useState(new Date().toISOString());
  useEffect(() => {
    const timer = setInterval(() => {
      metrics.reload();
      ready.reload();
      channels.reload();
      setUpdated(new Date().toISOString());
    }, REFRESH_MS);
    return () => clearInterval(timer);
  }, []);
  const rate = useEventRate();
  const m = metrics.value;
  const lag = m ? Number(BigInt(m.event_store_head) - BigInt(m.projection_position)) : undefined;
  const r = ready.value?.body;
  const enabled = (channels.value ?? []).filter((c) => c.status === 1);
  const judged = enabled.filter((c) => isRecord(c.health) && typeof c.health.state === 'string');
  const healthy = judged.filter((c) => isRecord(c.health) && c.health.state === 'closed').length;
  return (
    <>
      <Card title="At a glance" actions={<span class="muted">updated {time(updated)}</span>}>
        <ErrorLine error={metrics.error ?? ready.error} />
        <div class="figures">
          <Figure label="readiness" value={r?.status ?? '…'} testId="metric-ready" />
          {m && (
            <>
              <Figure label="tasks submitted, not yet upstream" value={quota(m.tasks_in_flight.submitted)} testId="metric-submitted" />
              <Figure label="tasks running upstream" value={quota(m.tasks_in_flight.dispatched)} testId="metric-dispatched" />
              <Figure label="projection lag (events)" value={quota(lag ?? 0)} hint={`at ${m.projection_position} of ${m.event_store_head}`} />
              <Figure
                label="final event → view, p50 / p99"
                value={`${ms(m.final_event_lag_ms.p50)} / ${ms(m.final_event_lag_ms.p99)}`}
                hint={`max ${ms(m.final_event_lag_ms.max)} over ${m.final_event_lag_ms.count}`}
              />
              <Figure label="memory (RSS)" value={bytes(m.memory.rss)} hint={`heap ${bytes(m.memory.heap_used)}`} />
            </>
          )}
          {judged.length > 0 && (
            <Figure
              label="enabled channels healthy"
              value={`${healthy} / ${judged.length}`}
              hint={healthy < judged.length ? 'see Channels' : undefined}
              testId="metric-channels"
            />
          )}
          <Figure
            label={rate.seconds === undefined ? 'events in the last minute' : `events since the page opened (${rate.seconds} s ago)`}
            value={quota(rate.count)}
            hint={`${rate.tasks} task, ${rate.billing} billing`}
            testId="metric-events"
          />
        </div>
      </Card>
      {r && (
        <Card title="Readiness">
          <table>
            <tbody>
              {Object.entries(r.checks ?? {}).map(([name, value]) => (
                <tr key={name}>
                  <td>{name}</td>
                  <td>
                    <Badge value={typeof value === 'string' ? value : JSON.stringify(value)} />
                  </td>
                </tr>
              ))}
              {Object.entries(r.processes ?? {}).map(([name, p]) => (
                <tr key={`process-${name}`}>
                  <td>{name}</td>
                  <td class="muted">last pass {time(p.last_pass)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </Card>
      )}
    </>
  );
}
