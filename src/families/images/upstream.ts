/**
 * The async image upstream protocol: the spec's own 4.9/4.10 interface (a gateway may front
 * another gateway of this kind; the built-in simulator speaks it too).
 */
import type { UpstreamAdapter, UpstreamResult, UpstreamStatus } from '../../engine/channels/upstream.js';
import { getStatus, percent, postSubmit, submittedAs, taskNotExist, unknownStatus } from '../kit/upstream.js';
import { subfamilyOf } from './view.js';

const PATH = '/v1/images/async/generations';

interface UpstreamImageTask {
  id?: unknown;
  status?: unknown;
  progress?: unknown;
  data?: unknown;
  error?: { code?: unknown; message?: unknown };
  usage?: unknown;
}

function resultsOf(data: unknown): UpstreamResult[] {
  if (!Array.isArray(data)) return [];
  return data.flatMap((item): UpstreamResult[] => {
    if (!item || typeof item !== 'object') return [];
    const i = item as Record<string, unknown>;
    const revised = typeof i.revised_prompt === 'string' ? { revisedPrompt: i.revised_prompt } : {};
    if (typeof i.b64_json === 'string' && i.b64_json) return [{ kind: 'image', b64: i.b64_json, ...revised }];
    if (typeof i.url === 'string' && i.url) return [{ kind: 'image', url: i.url, ...revised }];
    return [];
  });
}

/** What a poll answered. */
function statusOf(body: unknown): UpstreamStatus {
  const t = (body ?? {}) as UpstreamImageTask;
  const snapshot = { status: t.status, progress: t.progress };
  switch (t.status) {
    case 'queued':
    case 'in_progress':
      return { state: t.status, progress: percent(t.progress), snapshot };
    case 'completed': {
      const results = resultsOf(t.data);
      if (results.length === 0) return { state: 'failed', code: 'empty_result', reason: 'the upstream completed without images' };
      return { state: 'succeeded', results, usage: { units: results.length }, snapshot: { ...snapshot, usage: t.usage } };
    }
    case 'failed':
      return { state: 'failed', code: String(t.error?.code ?? 'upstream_failed'), reason: String(t.error?.message ?? 'the upstream task failed'), snapshot };
    default:
      throw unknownStatus(t.status);
  }
}

export const asyncImagesUpstream: UpstreamAdapter = {
  family: 'images',
  delivery: (task) => (subfamilyOf(task.action) === 'pro-image' ? 'b64' : 'url'),
  pollIntervalMs: 1000,
  maxAgeSeconds: 30 * 60,

  async submit(ctx) {
    const body = await postSubmit(ctx, `${ctx.baseUrl}${PATH}`, { ...ctx.task.request, model: ctx.upstreamModel });
    return submittedAs((body as UpstreamImageTask | undefined)?.id);
  },

  async poll(ctx) {
    return getStatus(ctx, `${ctx.baseUrl}${PATH}/${encodeURIComponent(ctx.upstreamTaskId)}`, statusOf, { lost: taskNotExist });
  },
};
