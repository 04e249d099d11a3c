/**
 * Usage by model and by API key (`/api/usage`, or `/api/admin/usage` for administrators): what
 * settlements charged, as stacked bars per UTC day over the last 30 days, or per hour over the last
 * day, that fill the card's width, and each model's or key's totals as a table. Read again when a
 * charge lands on the live stream.
 */
import { useState } from 'preact/hooks';
import { get } from '../api';
import { quota } from '../format';
import { useDebounced, useLiveEvents } from '../live';
import { useLoad } from '../load';
import type { Usage, UsageTotal } from '../types';
import { useChartWidth } from './chart-width';
import { Card, Empty, ErrorLine } from './ui';

type Span = 'days' | 'hours';

const SPANS: readonly [Span, string, 'day' | 'hour'][] = [
  ['days', '30 days', 'day'],
  ['hours', '24 hours', 'hour'],
];

/** Series colours, in the order of the totals (largest first); more series than colours reuse them. */
const COLOURS = ['#3358d4', '#1d7a46', '#c2410c', '#7c3aed', '#0e7490', '#b42318', '#9a6700', '#4b5563'];
const colourOf = (i: number) => COLOURS[i % COLOURS.length]!;

const HEIGHT = 170;
const PAD = { left: 64, right: 8, top: 10, bottom: 24 };

/** What a series is called: the model, the key's name, or why there is none. */
function nameOf(t: { key: string; name: string | null }, groupBy: Usage['group_by']): string {
  if (t.name) return t.name;
  if (t.key === '-') return 'no key';
  return groupBy === 'key' ? `deleted key ${t.key}` : t.key;
}

function tickLabel(at: string, bucket: Usage['bucket']): string {
  const date = new Date(at);
  // Days are UTC days; an hour reads in the reader's zone, with its weekday (the range spans two).
  return bucket === 'day'
    ? date.toLocaleDateString([], { month: 'short', day: 'numeric', timeZone: 'UTC' })
    : date.toLocaleString([], { weekday: 'short', hour: '2-digit', minute: '2-digit' });
}

function StackedBars(props: { usage: Usage; width: number }) {
  const { usage, width } = props;
  const count = usage.series[0]?.points.length ?? 0;
  const stacks = Array.from({ length: count }, (_, i) => usage.series.reduce((sum, s) => sum + (s.points[i]?.charged ?? 0), 0));
  const max = Math.max(1, ...stacks);
  const plotWidth = width - PAD.left - PAD.right;
  const plotHeight = HEIGHT - PAD.top - PAD.bottom;
  const slot = plotWidth / Math.max(1, count);
  const y = (amount: number) => PAD.top + plotHeight - (amount / max) * plotHeight;
  const ticks = count === 0 ? [] : width < 420 ? [0, count - 1] : [0, Math.floor(count / 2), count - 1];
  const at = (i: number) => usage.series[0]?.points[i]?.at ?? usage.from;
  return (
    <svg
      viewBox={`0 0 ${width} ${HEIGHT}`}
      width={width}
      height={HEIGHT}
      role="img"
      aria-label={`Charged per ${usage.bucket} by ${usage.group_by}: ${quota(stacks.reduce((a, b) => a + b, 0))} quota units in all`}
    >
      <line x1={PAD.left} x2={width - PAD.right} y1={y(0)} y2={y(0)} class="axis" />
      <line x1={PAD.left} x2={width - PAD.right} y1={y(max)} y2={y(max)} class="grid" />
      <text x={PAD.left - 6} y={y(max) + 4} class="tick" text-anchor="end">
        {quota(max)}
      </text>
      <text x={PAD.left - 6} y={y(0) + 4} class="tick" text-anchor="end">
        0
      </text>
      {usage.series.map((s, n) =>
        s.points.map((p, i) => {
          if (p.charged === 0) return null;
          const below = usage.series.slice(0, n).reduce((sum, other) => sum + (other.points[i]?.charged ?? 0), 0);
          return (
            <rect
              key={`${s.key}-${p.at}`}
              x={PAD.left + i * slot + slot * 0.15}
              width={Math.max(1, slot * 0.7)}
              y={y(below + p.charged)}
              height={y(below) - y(below + p.charged)}
              fill={colourOf(n)}
              class="segment"
              data-series={s.key}
              data-amount={p.charged}
            >
              <title>{`${nameOf(s, usage.group_by)}, ${tickLabel(p.at, usage.bucket)}: ${quota(p.charged)} (${p.tasks} tasks)`}</title>
            </rect>
          );
        }),
      )}
      {ticks.map((i) => (
        // The last label ends at the chart's right edge instead of running past it.
        <text
          key={i}
          x={i === count - 1 ? width - PAD.right : PAD.left + i * slot + slot / 2}
          y={HEIGHT - 6}
          class="tick"
          text-anchor={i === count - 1 ? 'end' : 'middle'}
        >
          {tickLabel(at(i), usage.bucket)}
        </text>
      ))}
    </svg>
  );
}

function Totals(props: { totals: UsageTotal[]; groupBy: Usage['group_by'] }) {
  const { totals, groupBy } = props;
  const sum = (f: (t: UsageTotal) => number) => totals.reduce((a, t) => a + f(t), 0);
  return (
    <table class="usage-totals" data-testid="usage-totals">
      <thead>
        <tr>
          <th>{groupBy === 'model' ? 'Model' : 'Key'}</th>
          <th class="num">Tasks</th>
          <th class="num">Charged</th>
        </tr>
      </thead>
      <tbody>
        {totals.map((t, i) => (
          <tr key={t.key} data-usage-key={t.key}>
            <td data-testid="usage-name">
              <span class="swatch">
                <svg width="10" height="10" aria-hidden="true">
                  <rect width="10" height="10" rx="2" fill={colourOf(i)} />
                </svg>
              </span>
              {nameOf(t, groupBy)}
            </td>
            <td class="num" data-testid="usage-tasks">
              {quota(t.tasks)}
            </td>
            <td class="num" data-testid="usage-charged">
              {quota(t.charged)}
            </td>
          </tr>
        ))}
      </tbody>
      <tfoot>
        <tr>
          <td>All</td>
          <td class="num" data-testid="usage-all-tasks">
            {quota(sum((t) => t.tasks))}
          </td>
          <td class="num" data-testid="usage-all-charged">
            {quota(sum((t) => t.charged))}
          </td>
        </tr>
      </tfoot>
    </table>
  );
}

function UsageBlock(props: { title: string; usage: Usage | undefined; testId: string }) {
  const [ref, width] = useChartWidth<HTMLDivElement>();
  const { usage } = props;
  return (
    <section class="usage-block" data-testid={props.testId}>
      <h3>{props.title}</h3>
      <div ref={ref} class="chart">
        {usage && usage.totals.length === 0 && <Empty>Nothing charged in this range.</Empty>}
        {usage && usage.totals.length > 0 && <StackedBars usage={usage} width={width} />}
      </div>
      {usage && usage.totals.length > 0 && <Totals totals={usage.totals} groupBy={usage.group_by} />}
    </section>
  );
}

/**
 * `path`: `/api/usage` or `/api/admin/usage`; `userId`: whose (administrators; none: everyone);
 * `accountId`: the account whose charges read it again (none: any account's).
 */
export function UsageCard(props: { path: string; userId?: string; accountId?: string; title?: string }) {
  const [span, setSpan] = useState<Span>('days');
  const bucket = SPANS.find(([s]) => s === span)![2];
  const who = props.userId ? `&user_id=${encodeURIComponent(props.userId)}` : '';
  const query = (groupBy: string) => `${props.path}?group_by=${groupBy}&bucket=${bucket}${who}`;
  const usage = useLoad(() => Promise.all([get<Usage>(query('model')), get<Usage>(query('key'))]), [props.path, bucket, who]);
  const reload = useDebounced(usage.reload, 400);
  useLiveEvents((event) => {
    if (event.type === 'QuotaSettled' && (props.accountId === undefined || event.accountId === props.accountId)) reload();
  });
  const [byModel, byKey] = usage.value ?? [];
  return (
    <Card
      title={props.title ?? 'Usage'}
      testId="usage"
      actions={
        <div class="toggle" role="group" aria-label="range">
          {SPANS.map(([s, label]) => (
            <button key={s} type="button" class={s === span ? 'primary' : ''} aria-pressed={s === span} onClick={() => setSpan(s)} data-testid={`usage-${s}`}>
              {label}
            </button>
          ))}
        </div>
      }
    >
      <ErrorLine error={usage.error} />
      <p class="hint">
        What settled tasks were charged, per {bucket === 'day' ? 'UTC day over the last 30 days' : 'hour over the last day'}
        {byModel ? ` (${quota(byModel.totals.reduce((a, t) => a + t.charged, 0))} in all)` : ''}.
      </p>
      <div class="usage-grid">
        <UsageBlock title="By model" usage={byModel} testId="usage-by-model" />
        <UsageBlock title="By key" usage={byKey} testId="usage-by-key" />
      </div>
    </Card>
  );
}
