/**
 * `POST /v1/chat/completions` for std-image / pro-image (spec 4.5, answer 2.2). A synchronous
 * task (runSyncTask): reserved on `n` images, settled on the images returned. The images are
 * re-hosted and given in `message.content` as Markdown image links to signed gateway URLs,
 * one per line pair (`![image 1](https://…/assets/…)\n\n![image 2](…)`). `stream: true`
 * answers chat-completion chunks: the role, the content, the finish with `usage`, `[DONE]`.
 * `id` is the task id (also `x-task-id`): `GET /v1/chat/completions/{id}` answers it again.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { runSyncTask } from '../../engine/tasks/sync-task.js';
import { assertModelAllowed, authenticate, authenticateFirst } from '../../http/auth/bearer.js';
import type { GatewayDeps } from '../../http/deps.js';
import { GatewayError, useErrorShape } from '../../http/errors.js';
import { metadataFor } from '../../http/request-meta.js';
import type { UrlFieldSpec } from '../kit/url-fields.js';
import { submitHeaders } from '../kit/schema.js';
import { enforceUrlPolicyOn } from '../kit/url-policy.js';
import { chatBody, chatChunks, SYNC_IMAGE_FAMILY } from './answers.js';
import { syncCallOptions } from '../kit/sync-call.js';
import { planChatRequest } from './rules.js';
import { ChatAnswer, ChatBody } from './schema.js';
import { SseReply } from './sse.js';
import { callChat, CHAT_PATH } from './upstream.js';

/** `image_url` parts (`{url}` or the URL itself), for the URL policy. */
const CHAT_URL_FIELDS: readonly UrlFieldSpec[] = [{ path: 'messages.*.content.*.image_url.url' }, { path: 'messages.*.content.*.image_url' }];

const DESCRIPTION = [
  'A synchronous call: the answer carries the images as Markdown links in `choices[0].message.content`. Its id is also the `x-task-id` response header: `GET /v1/chat/completions/{id}` answers it again, and a retry with the same `Idempotency-Key` and body answers the same completion without charging again.',
  'With `stream: true` the answer is `text/event-stream` instead: `chat.completion.chunk` frames (the role, the content, the finish with `usage`), then `data: [DONE]`. A refusal before the first frame is an ordinary JSON error; after it, a frame `{"error": {code, message}}`.',
].join('\n\n');

export function chatRoutes(deps: GatewayDeps): FastifyPluginAsync {
  return async (plain) => {
    const app = plain.withTypeProvider<ZodTypeProvider>();
    useErrorShape(app, 'plain');
    authenticateFirst(app, deps);

    app.post(
      CHAT_PATH,
      {
        schema: {
          tags: ['images'],
          summary: 'Synchronous image generation, chat-style (std-image, pro-image)',
          description: DESCRIPTION,
          headers: submitHeaders,
          body: ChatBody,
          // The JSON answer; a streamed one is written past the serialiser (see the description).
          response: { 200: ChatAnswer },
        },
      },
      async (request, reply) => {
        const caller = await authenticate(request, deps.tokens, deps.clock());
        const planned = planChatRequest(request.body);
        if (!planned.ok) throw new GatewayError(400, 'invalid_request', planned.message, planned.param);
        const { plan } = planned;
        assertModelAllowed(caller, plan.model, deps.catalog);
        await enforceUrlPolicyOn(deps, request.body, CHAT_URL_FIELDS);
        const sse = plan.stream ? new SseReply(reply) : undefined;
        const options = syncCallOptions(request, reply);
        try {
          const { call } = await runSyncTask(
            deps,
            {
              family: SYNC_IMAGE_FAMILY,
              channelFamily: 'images',
              action: plan.action,
              model: plan.model,
              caller,
              request: plan.recorded,
              units: plan.units,
              metadata: metadataFor(request, deps.clock()),
              delivery: 'url',
              ...options,
              onTask: (taskId, replayed) => {
                options.onTask(taskId);
                // A retry waiting for the first call keeps its stream alive like the call does.
                if (replayed) sse?.keepAlive();
              },
            },
            async (ctx) => {
              sse?.keepAlive();
              return callChat(deps, ctx, plan.upstream);
            },
          );
          if (!sse) return chatBody(call);
          for (const chunk of chatChunks(call)) sse.send(chunk);
          sse.done();
          sse.end();
          return reply;
        } catch (err) {
          if (!sse) throw err;
          sse.fail(err);
          return reply;
        }
      },
    );
  };
}
