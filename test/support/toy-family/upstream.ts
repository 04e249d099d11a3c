/**
 * Step 4 of docs/adding-a-family.md, `upstream.ts`: the toy upstream protocol as an
 * `UpstreamAdapter` (src/engine/channels/upstream.ts), over the kit's `postSubmit` / `getStatus`
 * (src/families/kit/upstream.ts): 5xx, 429 and network errors are retryable (the next channel
 * is tried), other refusals final.
 *   POST {base}/toy-upstream/v1/drawings        `{model, prompt, n, style}` → `{job, state: "waiting"}`
 *   GET  {base}/toy-upstream/v1/drawings/{job}  `{job, state, percent, pictures: [{href}], reason}`
 * `state` goes waiting → drawing → finished | broken. The pictures are PNGs the engine re-hosts;
 * `usage.units` (the pictures delivered) is what settlement charges.
 */
import { UpstreamError, type UpstreamAdapter, type UpstreamResult, type UpstreamStatus } from '../../../src/engine/channels/upstream.js';
import { isPlainObject } from '../../../src/families/kit/fields.js';
import { getStatus, postSubmit, unknownStatus } from '../../../src/families/kit/upstream.js';
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

/** What a poll answered. */
function statusOf(body: unknown): UpstreamStatus {
  const job = jobOf(body, 'poll');
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
      throw unknownStatus(job.state);
  }
}

export const toyUpstream: UpstreamAdapter = {
  family: TOY_CHANNEL_FAMILY,
  delivery: () => 'url',
  pollIntervalMs: 1000,
  maxAgeSeconds: 10 * 60,

  async submit(ctx) {
    const body = await postSubmit(ctx, `${ctx.baseUrl}${TOY_UPSTREAM_PATH}`, { ...ctx.task.request, model: ctx.upstreamModel });
    return { upstreamTaskId: jobOf(body, 'submit').job as string };
  },

  async poll(ctx) {
    return getStatus(ctx, `${ctx.baseUrl}${TOY_UPSTREAM_PATH}/${encodeURIComponent(ctx.upstreamTaskId)}`, statusOf, { what: 'job' });
  },
};
