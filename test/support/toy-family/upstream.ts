/**
 * Step 4 of docs/adding-a-family.md, `upstream.ts`: the toy upstream protocol as an
 * `UpstreamAdapter` (src/engine/channels/upstream.ts), over `upstreamJson` / `failureOf`
 * (src/engine/channels/upstream-http.ts): 5xx, 429 and network errors are retryable (the next
 * channel is tried), other refusals final.
 *   POST {base}/toy-upstream/v1/drawings        `{model, prompt, n, style}` → `{job, state: "waiting"}`
 *   GET  {base}/toy-upstream/v1/drawings/{job}  `{job, state, percent, pictures: [{href}], reason}`
 * `state` goes waiting → drawing → finished | broken. The pictures are PNGs the engine re-hosts;
 * `usage.units` (the pictures delivered) is what settlement charges.
 */
import { failureOf, upstreamJson } from '../../../src/engine/channels/upstream-http.js';
import { UpstreamError, type UpstreamAdapter, type UpstreamResult, type UpstreamStatus } from '../../../src/engine/channels/upstream.js';
import { isPlainObject } from '../../../src/families/kit/fields.js';
import { TOY_CHANNEL_FAMILY } from './catalog.js';

/** The upstream's path (the simulator reads it: src/simulator/families/<family>.ts may read its family's protocol). */
export const TOY_UPSTREAM_PATH = '/toy-upstream/v1/drawings';

function jobOf(body: unknown, what: string): Record<string, unknown> {
  if (!isPlainObject(body) || typeof body.job !== 'string' || !body.job) throw new UpstreamError(`${what}: upstream answered without a job`, true);
  return body;
}

function picturesOf(job: Record<string, unknown>): UpstreamResult[] {
  const pictures = Array.isArray(job.pictures) ? job.pictures : [];
  return pictures.flatMap((p: unknown) => (isPlainObject(p) && typeof p.href === 'string' && p.href ? [{ kind: 'image' as const, url: p.href }] : []));
}

export const toyUpstream: UpstreamAdapter = {
  family: TOY_CHANNEL_FAMILY,
  delivery: () => 'url',
  pollIntervalMs: 1000,
  maxAgeSeconds: 10 * 60,

  async submit({ baseUrl, channel, upstreamModel, task, signal, idempotencyKey }) {
    const reply = await upstreamJson('POST', `${baseUrl}${TOY_UPSTREAM_PATH}`, {
      key: channel.key,
      body: { ...task.request, model: upstreamModel },
      signal,
      idempotencyKey,
    });
    if (reply.status !== 200) throw failureOf(reply, 'submit');
    return { upstreamTaskId: jobOf(reply.body, 'submit').job as string };
  },

  async poll({ baseUrl, channel, upstreamTaskId, signal }): Promise<UpstreamStatus> {
    const reply = await upstreamJson('GET', `${baseUrl}${TOY_UPSTREAM_PATH}/${encodeURIComponent(upstreamTaskId)}`, { key: channel.key, signal });
    if (reply.status === 404) return { state: 'lost', reason: 'the upstream no longer knows the job' };
    if (reply.status !== 200) throw failureOf(reply, 'poll');
    const job = jobOf(reply.body, 'poll');
    const progress = typeof job.percent === 'number' ? job.percent : 0;
    switch (job.state) {
      case 'waiting':
        return { state: 'queued', progress: 0 };
      case 'drawing':
        return { state: 'in_progress', progress };
      case 'finished': {
        const results = picturesOf(job);
        if (results.length === 0) return { state: 'failed', code: 'empty_result', reason: 'the upstream finished without pictures' };
        return { state: 'succeeded', results, usage: { units: results.length } };
      }
      case 'broken':
        return { state: 'failed', code: 'upstream_failed', reason: typeof job.reason === 'string' && job.reason ? job.reason : 'the upstream job broke' };
      default:
        throw new UpstreamError(`poll: unknown upstream state ${String(job.state)}`, true);
    }
  },
};
