/** The peer scenario's section of the report (bench/scenarios/peer.ts): one table, then what each side does. */
import type { PeerFigure, PeerOperation, PeerResult, PeerTargetResult } from './scenarios/peer.js';

const OPERATION_LABEL: Record<PeerOperation, string> = {
  image: 'POST /v1/images/generations (b64_json)',
  videoSubmit: 'POST /v1/videos',
  videoRetrieve: 'GET /v1/videos/{id}',
};

/** What differs between the sides beyond their cost, so the rows are read as what they are. */
const NOTES = [
  'A video submit through LiteLLM waits for the upstream to accept it; through this gateway it is answered once recorded, and the upstream call follows. A retrieve through LiteLLM is forwarded to the upstream; through this gateway it reads its own view.',
  "LiteLLM's config sets `drop_params` (for an OpenAI image model it does not know it refuses `response_format` otherwise); neither proxy forwards `response_format`, and the stand-in answers b64_json.",
];

const at = (t: PeerTargetResult, op: PeerOperation, concurrency: number): PeerFigure | undefined => t.figures[op].find((f) => f.concurrency === concurrency);
const signed = (ms: number) => `${ms >= 0 ? '+' : '−'}${Math.abs(ms).toFixed(ms % 1 === 0 ? 0 : 2)}`;
const errors = (f: PeerFigure) => (f.non2xx + f.errors > 0 ? `, **${f.non2xx} non-2xx, ${f.errors} errors**` : '');

function row(t: PeerTargetResult, op: PeerOperation, upstream: PeerTargetResult | undefined): string {
  const one = at(t, op, 1);
  const many = at(t, op, 32);
  const base = upstream && upstream !== t ? at(upstream, op, 1) : undefined;
  const latency = one ? `${one.p50Ms} / ${one.p99Ms} / ${one.meanMs.toFixed(2)}${errors(one)}` : '—';
  const added =
    one && base ? `${signed(one.p50Ms - base.p50Ms)} / ${signed(one.p99Ms - base.p99Ms)} / ${signed(Math.round((one.meanMs - base.meanMs) * 100) / 100)}` : '—';
  const throughput = many ? `${many.requestsPerSecond} req/s, p99 ${many.p99Ms} ms${errors(many)}` : '—';
  const cpu = `${one?.cpuMsPerRequest ?? '—'} / ${many?.cpuMsPerRequest ?? '—'}`;
  return `| ${t.target} | ${OPERATION_LABEL[op]} | ${latency} | ${added} | ${throughput} | ${cpu} |`;
}

export function peerMarkdown(p: PeerResult): string {
  const upstream = p.targets.find((t) => t.target === 'upstream direct');
  const litellm =
    'skipped' in p.litellm ? `LiteLLM not measured: ${p.litellm.skipped}.` : `LiteLLM ${p.litellm.version} (Python ${p.litellm.python}, no database).`;
  const mb = (b: number) => Math.round(b / 2 ** 20);
  return [
    `#### Peer: LiteLLM and this gateway in front of the same stand-in upstream (${p.seconds} s per figure)`,
    '',
    `${litellm} Latency at concurrency 1 (ms: p50 / p99 / mean, the mean from the request count); added = over the upstream measured directly. Throughput at 32 connections. CPU: user + system time of the serving processes per request, at 1 / 32 connections.`,
    '',
    '| side | operation | c=1 p50 / p99 / mean ms | added over upstream | c=32 | CPU ms/request |',
    '|---|---|---|---|---|---|',
    ...p.targets.flatMap((t) => (['image', 'videoSubmit', 'videoRetrieve'] as const).map((op) => row(t, op, upstream))),
    '',
    `Peak RSS (sum over the serving processes): ${p.targets.map((t) => `${t.target} ${mb(t.peakRssBytes)} MB`).join('; ')}.`,
    '',
    ...[...new Set(p.targets.map((t) => t.perRequest))].map((what) => `- ${what}`),
    ...NOTES.map((note) => `- ${note}`),
    '',
  ].join('\n');
}
