/**
 * `POST /v1/chat/completions` for std-image / pro-image (spec 4.5, answer 2.2). A synchronous
 * task (runSyncTask): reserved on `n` images, settled on the images returned. The images are
 * re-hosted and given in `message.content` as Markdown image links to signed gateway URLs,
 * one per line pair (`![image 1](https://…/assets/…)\n\n![image 2](…)`). `stream: true`
 * answers chat-completion chunks: the role, the content, the finish with `usage`, `[DONE]`.
 */
import type { FastifyPluginAsync } from 'fastify';
import { runSyncTask } from '../../engine/sync-task.js';
import { assertModelAllowed, authenticate } from '../../http/auth/bearer.js';
import type { GatewayDeps } from '../../http/deps.js';
import { GatewayError, useErrorShape } from '../../http/errors.js';
import { metadataFor } from '../../http/request-meta.js';
import { isPlainObject } from '../images/rules/shared.js';
import type { UrlFieldSpec } from '../url-fields.js';
import { enforceUrlPolicyOn } from '../url-policy.js';
import { planChatRequest } from './rules.js';
import { SseReply } from './sse.js';
import { callChat, CHAT_PATH } from './upstream.js';

/** TaskSubmitted family of the std-image / pro-image synchronous calls. */
export const SYNC_IMAGE_FAMILY = 'sync-image';

/** `image_url` parts (`{url}` or the URL itself), for the URL policy. */
const CHAT_URL_FIELDS: readonly UrlFieldSpec[] = [{ path: 'messages.*.content.*.image_url.url' }, { path: 'messages.*.content.*.image_url' }];

type ChatUsage = { prompt_tokens: number; completion_tokens: number; total_tokens: number };

const int = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? Math.max(0, Math.round(v)) : 0);

export function chatUsageOf(snapshot: Record<string, unknown> | undefined): ChatUsage {
  const usage = snapshot && isPlainObject(snapshot.usage) ? snapshot.usage : {};
  const prompt = int(usage.prompt_tokens);
  const completion = int(usage.completion_tokens);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: int(usage.total_tokens) || prompt + completion };
}

export function markdownOf(urls: readonly string[]): string {
  return urls.map((url, i) => `![image ${i + 1}](${url})`).join('\n\n');
}

function chunk(base: { id: string; created: number; model: string }, delta: Record<string, unknown>, finish: string | null, usage?: ChatUsage) {
  return { ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }], ...(usage ? { usage } : {}) };
}

export function chatRoutes(deps: GatewayDeps): FastifyPluginAsync {
  return async (app) => {
    useErrorShape(app, 'plain');

    app.post(CHAT_PATH, { schema: { tags: ['images'], summary: 'Synchronous image generation, chat-style (std-image, pro-image)' } }, async (request, reply) => {
      const caller = await authenticate(request, deps.tokens, deps.clock());
      const planned = planChatRequest(request.body);
      if (!planned.ok) throw new GatewayError(400, 'invalid_request', planned.message, planned.param);
      const { plan } = planned;
      assertModelAllowed(caller, plan.model, deps.catalog);
      await enforceUrlPolicyOn(deps, request.body, CHAT_URL_FIELDS);
      const sse = plan.stream ? new SseReply(reply) : undefined;
      try {
        let text = '';
        const outcome = await runSyncTask(
          deps,
          { family: SYNC_IMAGE_FAMILY, channelFamily: 'images', action: plan.action, model: plan.model, caller, request: plan.recorded, units: plan.units, metadata: metadataFor(request, deps.clock()), delivery: 'url' },
          async (ctx) => {
            sse?.keepAlive();
            const answer = await callChat(deps, ctx, plan.upstream);
            text = answer.text;
            return answer;
          },
        );
        const urls = outcome.results.flatMap((r) => (r.url ? [r.url] : []));
        const content = urls.length > 0 ? markdownOf(urls) : text;
        const usage = chatUsageOf(outcome.snapshot);
        const base = { id: outcome.task.taskId, created: Math.floor(deps.clock().getTime() / 1000), model: plan.model };
        if (!sse) {
          return { ...base, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }], usage };
        }
        sse.send(chunk(base, { role: 'assistant', content: '' }, null));
        sse.send(chunk(base, { content }, null));
        sse.send(chunk(base, {}, 'stop', usage));
        sse.done();
        sse.end();
        return reply;
      } catch (err) {
        if (!sse) throw err;
        sse.fail(err);
        return reply;
      }
    });
  };
}
