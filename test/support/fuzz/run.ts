/**
 * Sends generated requests to the gateway a few at a time and judges each answer: never 5xx
 * (nor no answer), and every 4xx in the error shape of the family the path belongs to.
 */
import { describe as describeRequest, materialize, type Credentials, type FuzzRequest } from './request.js';
import { hasShape, messageOf, shapeOf } from './routes.js';

export interface Outcome {
  id: string;
  request: FuzzRequest;
  /** 0: no answer (connection failed or timed out). */
  status: number;
  body: unknown;
  error?: string;
}

async function send(baseUrl: string, request: FuzzRequest, creds: Credentials, id: string): Promise<Outcome> {
  const { url, init } = materialize(request, creds, id);
  try {
    const res = await fetch(baseUrl + url, { ...init, signal: AbortSignal.timeout(30_000) });
    let text = '';
    // The downstream event stream never ends by itself: its status and headers are the answer.
    if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream') && new URL(res.url).pathname.startsWith('/api/events/stream'))
      await res.body?.cancel();
    else text = await res.text();
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON: judged below */
    }
    return { id, request, status: res.status, body };
  } catch (err) {
    return {
      id,
      request,
      status: 0,
      body: undefined,
      error: err instanceof Error ? `${err.name}: ${err.message} ${String((err as { cause?: unknown }).cause ?? '')}` : String(err),
    };
  }
}

/** Sends every request, at most `concurrency` at once; ids are `${prefix}${index}`. */
export async function sendAll(baseUrl: string, requests: readonly FuzzRequest[], creds: Credentials, prefix: string, concurrency = 8): Promise<Outcome[]> {
  const outcomes: Outcome[] = new Array(requests.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < requests.length; i = next++) outcomes[i] = await send(baseUrl, requests[i]!, creds, `${prefix}${i}`);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return outcomes;
}

/** Status codes whose refusals name the field or header at fault in their message. */
const NAMES_A_FIELD = new Set([400, 413, 414, 415]);

/** What is wrong with an answer, or undefined when it is acceptable. */
export function problemOf(outcome: Outcome): string | undefined {
  const { status, body, request } = outcome;
  if (status === 0) return `no answer (${outcome.error})`;
  if (status >= 500) return `answered ${status}: ${JSON.stringify(body)?.slice(0, 300)}`;
  if (status < 400) return undefined;
  const path = new URL(request.url, 'http://x').pathname;
  const shape = shapeOf(path);
  // Headers too large for Node's parser: the path is known only when the request line was in
  // the chunk that overflowed (src/http/client-errors.ts), else the plain shape.
  const acceptable = status === 431 ? [shape, 'plain' as const] : [shape];
  if (!acceptable.some((s) => hasShape(s, body))) return `${status} not in the ${shape} error shape: ${JSON.stringify(body)?.slice(0, 300)}`;
  if (NAMES_A_FIELD.has(status) && !/^[^\s:][^:]{0,80}: /.test(messageOf(body))) return `${status} names no field or header: ${messageOf(body).slice(0, 200)}`;
  return undefined;
}

export function failureReport(seed: number, failures: ReadonlyArray<{ outcome: Outcome; problem: string }>): string {
  const lines = failures.slice(0, 15).map(({ outcome, problem }) => `- ${outcome.id} ${problem}\n  request: ${describeRequest(outcome.request)}`);
  return `${failures.length} bad answers (seed ${seed}; replay with FUZZ_SEED=${seed}):\n${lines.join('\n')}`;
}

export function statusCounts(outcomes: readonly Outcome[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const o of outcomes) counts[o.status] = (counts[o.status] ?? 0) + 1;
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => Number(a) - Number(b)));
}
