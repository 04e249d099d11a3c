/**
 * Spending over time as an inline SVG bar chart: what settlements and debits took from the
 * balance, summed per time bucket. The bucket grows with the span the statement covers (a minute
 * to a week) so a fresh account and a year-old one both read as up to 24 bars ending now. The
 * chart fills its card's width (components/chart-width.ts).
 */
import { quota } from '../format';
import { useChartWidth } from './chart-width';
import type { LedgerEntry } from '../types';
import { Empty } from './ui';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const STEPS = [MINUTE, 5 * MINUTE, 15 * MINUTE, HOUR, 6 * HOUR, DAY, 7 * DAY];
const MAX_BARS = 24;

const HEIGHT = 180;
const PAD = { left: 64, right: 8, top: 12, bottom: 28 };

export interface Bucket {
  start: number;
  amount: number;
}

/** The buckets ending at `now` that cover every spending entry (the oldest ones folded into the first bar). */
export function spendingBuckets(entries: readonly LedgerEntry[], now: number): { step: number; buckets: Bucket[] } {
  const spends = entries
    .filter((e) => e.type === 'QuotaSettled' || e.type === 'QuotaDebited')
    .map((e) => ({ at: Date.parse(e.at), amount: -e.balance_delta }))
    .filter((s) => !Number.isNaN(s.at) && s.amount > 0);
  const oldest = Math.min(now, ...spends.map((s) => s.at));
  const step = STEPS.find((s) => (now - oldest) / s <= MAX_BARS - 1) ?? STEPS[STEPS.length - 1]!;
  const end = Math.floor(now / step) * step + step;
  const count = Math.min(MAX_BARS, Math.max(12, Math.ceil((end - oldest) / step)));
  const start = end - count * step;
  const buckets = Array.from({ length: count }, (_, i) => ({ start: start + i * step, amount: 0 }));
  for (const s of spends) buckets[Math.max(0, Math.min(count - 1, Math.floor((s.at - start) / step)))]!.amount += s.amount;
  return { step, buckets };
}

function label(at: number, step: number): string {
  const date = new Date(at);
  return step < DAY ? date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }) : date.toLocaleDateString([], { month: 'short', day: 'numeric' });
}

export function SpendingChart(props: { entries: readonly LedgerEntry[]; now?: number }) {
  const [ref, width] = useChartWidth<HTMLDivElement>();
  return <div ref={ref}>{<Bars entries={props.entries} now={props.now ?? Date.now()} width={width} />}</div>;
}

function Bars(props: { entries: readonly LedgerEntry[]; now: number; width: number }) {
  const WIDTH = props.width;
  const { step, buckets } = spendingBuckets(props.entries, props.now);
  const total = buckets.reduce((sum, b) => sum + b.amount, 0);
  if (total === 0) return <Empty>No spending yet: charges appear here once tasks are settled.</Empty>;
  const max = Math.max(...buckets.map((b) => b.amount));
  const plotWidth = WIDTH - PAD.left - PAD.right;
  const plotHeight = HEIGHT - PAD.top - PAD.bottom;
  const slot = plotWidth / buckets.length;
  const y = (amount: number) => PAD.top + plotHeight - (amount / max) * plotHeight;
  const ticks = WIDTH < 420 ? [0, buckets.length - 1] : [0, Math.floor(buckets.length / 2), buckets.length - 1];
  return (
    <figure class="chart" data-testid="spending-chart">
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        width={WIDTH}
        height={HEIGHT}
        role="img"
        aria-label={`Spending per ${step / MINUTE} minutes: ${quota(total)} quota units in all`}
      >
        <line x1={PAD.left} x2={WIDTH - PAD.right} y1={y(0)} y2={y(0)} class="axis" />
        <line x1={PAD.left} x2={WIDTH - PAD.right} y1={y(max)} y2={y(max)} class="grid" />
        <text x={PAD.left - 6} y={y(max) + 4} class="tick" text-anchor="end">
          {quota(max)}
        </text>
        <text x={PAD.left - 6} y={y(0) + 4} class="tick" text-anchor="end">
          0
        </text>
        {buckets.map((b, i) => (
          <rect
            key={b.start}
            x={PAD.left + i * slot + slot * 0.15}
            width={slot * 0.7}
            y={y(b.amount)}
            height={y(0) - y(b.amount)}
            class="bar"
            data-amount={b.amount}
          >
            <title>{`${new Date(b.start).toLocaleString()}: ${quota(b.amount)}`}</title>
          </rect>
        ))}
        {ticks.map((i) => (
          <text
            key={i}
            x={i === buckets.length - 1 ? WIDTH - PAD.right : PAD.left + i * slot + slot / 2}
            y={HEIGHT - 8}
            class="tick"
            text-anchor={i === buckets.length - 1 ? 'end' : 'middle'}
          >
            {label(buckets[i]!.start, step)}
          </text>
        ))}
      </svg>
      <figcaption>
        {quota(total)} quota units spent, per {step < HOUR ? `${step / MINUTE} min` : step < DAY ? `${step / HOUR} h` : `${step / DAY} d`}
      </figcaption>
    </figure>
  );
}
