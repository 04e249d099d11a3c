/**
 * The async image upstream protocol: the spec's own 4.9/4.10 interface (a gateway may front
 * another gateway of this kind; the built-in simulator speaks it too).
 */
import { failureOf, upstreamJson } from '../../engine/channels/upstream-http.js';
import { UpstreamError, type UpstreamAdapter, type UpstreamResult, type UpstreamStatus } from '../../engine/channels/upstream.js';
import { subfamilyOf } from './view.js';

interface UpstreamImageTask {
  id?: unknown;
  status?: unknown;
  progress?: unknown;
  data?: unknown;
  error?: { code?: unknown; message?: unknown };
  usage?: unknown;
}

const percent = (p: unknown): number => {
  const n = typeof p === 'number' ? p : Number.parseFloat(String(p ?? '0'));
  return Number.isFinite(n) ? n : 0;
};

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

export const asyncImagesUpstream: UpstreamAdapter = {
  family: 'images',
  delivery: (task) => (subfamilyOf(task.action) === 'pro-image' ? 'b64' : 'url'),
  pollIntervalMs: 1000,
  maxAgeSeconds: 30 * 60,

  async submit({ baseUrl, channel, upstreamModel, task, signal, idempotencyKey }) {
    const reply = await upstreamJson('POST', `${baseUrl}/v1/images/async/generations`, {
      key: channel.key,
      body: { ...task.request, model: upstreamModel },
      signal,
      idempotencyKey,
    });
    if (reply.status !== 200) throw failureOf(reply, 'submit');
    const id = (reply.body as UpstreamImageTask | undefined)?.id;
    if (typeof id !== 'string' || !id) throw new UpstreamError('submit: upstream answered without a task id', true);
    return { upstreamTaskId: id };
  },

  async poll({ baseUrl, channel, upstreamTaskId, signal }): Promise<UpstreamStatus> {
    const reply = await upstreamJson('GET', `${baseUrl}/v1/images/async/generations/${encodeURIComponent(upstreamTaskId)}`, { key: channel.key, signal });
    if (reply.status === 404 || (reply.status === 400 && JSON.stringify(reply.body).includes('task_not_exist'))) {
      return { state: 'lost', reason: 'the upstream no longer knows the task' };
    }
    if (reply.status !== 200) throw failureOf(reply, 'poll');
    const t = (reply.body ?? {}) as UpstreamImageTask;
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
        throw new UpstreamError(`poll: unknown upstream status ${String(t.status)}`, true);
    }
  },
};
