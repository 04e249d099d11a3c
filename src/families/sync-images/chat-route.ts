/**
 * `POST /v1/chat/completions` for std-image / pro-image (spec 4.5, answer 2.2). A synchronous
 * task (runSyncTask): reserved on `n` images, settled on the images returned. The images are
 * re-hosted and given in `message.content` as Markdown image links to signed gateway URLs,
 * one per line pair (`![image 1](https://…/assets/…)\n\n![image 2](…)`). `stream: true`
 * answers chat-completion chunks: the role, the content, the finish with `usage`, `[DONE]`.
 * `id` is the task id (also `x-task-id`): `GET /v1/chat/completions/{id}` answers it again.
 */
import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { GatewayDeps } from '../../http/deps.js';
import type { UrlFieldSpec } from '../kit/url-fields.js';
import { submitHeaders } from '../kit/schema.js';
import { runFamilySyncCall, type SyncStream } from '../kit/sync-call.js';
import { chatBody, chatChunks, SYNC_IMAGE_FAMILY } from './answers.js';
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

/** `stream: true`: the chunks of the completion, then `[DONE]`. */
function chatStream(reply: FastifyReply): SyncStream {
  const sse = new SseReply(reply);
  return {
    keepAlive: () => sse.keepAlive(),
    finish: (call) => {
      for (const chunk of chatChunks(call)) sse.send(chunk);
      sse.done();
      sse.end();
    },
    fail: (err) => sse.fail(err),
  };
}

export function chatRoutes(deps: GatewayDeps): FastifyPluginAsyncZod {
  return async (app) => {
    // `stream: true` answers text/event-stream (the document says so).
    const config = { auth: 'bearer', errorShape: 'plain', eventStream: 'when-asked' } as const;

    app.post(
      CHAT_PATH,
      {
        config,
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
      async (request, reply) =>
        runFamilySyncCall(deps, request, reply, {
          family: SYNC_IMAGE_FAMILY,
          channelFamily: 'images',
          plan: planChatRequest,
          urlFields: CHAT_URL_FIELDS,
          call: (ctx, plan) => callChat(deps, ctx, plan.upstream),
          answer: chatBody,
          stream: (plan, reply) => (plan.stream ? chatStream(reply) : undefined),
        }),
    );
  };
}
