/**
 * The answers of the synchronous std-image / pro-image calls (spec 2.2), rendered from the
 * call's record (engine/tasks/sync-record.ts): the call, its idempotent retries and the query by id
 * all answer through these, so they answer the same body. `created` is when the call completed.
 * Base64 items are read back from the re-hosted files.
 */
import { resultBase64, type SucceededSyncCall } from '../../engine/tasks/sync-record.js';
import type { GatewayDeps } from '../../http/deps.js';
import { isPlainObject } from '../kit/fields.js';
import type { ChatAnswerBody, ImagesAnswerBody } from './schema.js';

/** TaskSubmitted family of the std-image / pro-image synchronous calls. */
export const SYNC_IMAGE_FAMILY = 'sync-image';

type ChatUsage = ChatAnswerBody['usage'];

const int = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? Math.max(0, Math.round(v)) : 0);

/** The images-style `usage` of 2.2, every figure an integer. */
function imagesUsageOf(raw: unknown): ImagesAnswerBody['usage'] {
  const usage = isPlainObject(raw) ? raw : {};
  const details = isPlainObject(usage.input_tokens_details) ? usage.input_tokens_details : {};
  const input = int(usage.input_tokens);
  const output = int(usage.output_tokens);
  return {
    total_tokens: int(usage.total_tokens) || input + output,
    input_tokens: input,
    output_tokens: output,
    input_tokens_details: { text_tokens: int(details.text_tokens), image_tokens: int(details.image_tokens) },
  };
}

function chatUsageOf(snapshot: Record<string, unknown> | undefined): ChatUsage {
  const usage = snapshot && isPlainObject(snapshot.usage) ? snapshot.usage : {};
  const prompt = int(usage.prompt_tokens);
  const completion = int(usage.completion_tokens);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: int(usage.total_tokens) || prompt + completion };
}

function markdownOf(urls: readonly string[]): string {
  return urls.map((url, i) => `![image ${i + 1}](${url})`).join('\n\n');
}

/** Images-style answer: `url` items when the call delivered URLs, else `b64_json` (pro-image's default, `stream`). */
export async function imagesBody(deps: GatewayDeps, call: SucceededSyncCall): Promise<ImagesAnswerBody> {
  const data = await Promise.all(
    call.results.map(async (r) => {
      const revised = r.revisedPrompt !== undefined ? { revised_prompt: r.revisedPrompt } : {};
      return r.url !== undefined ? { url: r.url, ...revised } : { b64_json: await resultBase64(deps, call, r), ...revised };
    }),
  );
  return { created: call.completedAt, data, usage: imagesUsageOf(call.upstream?.usage) };
}

/** The `image_generation.completed` events of a streamed call, one per image (all read before any is sent). */
export async function completedEvents(deps: GatewayDeps, call: SucceededSyncCall, echo: object) {
  const usages = Array.isArray(call.upstream?.usages) ? call.upstream.usages : [];
  const type = 'image_generation.completed';
  return Promise.all(
    call.results.map(async (r, i) => ({
      type,
      b64_json: await resultBase64(deps, call, r),
      created_at: call.completedAt,
      ...echo,
      usage: imagesUsageOf(usages[i]),
    })),
  );
}

/** The message: Markdown links to the images, or the upstream's text when it answered without one. */
function contentOf(call: SucceededSyncCall): string {
  const urls = call.results.flatMap((r) => (r.url ? [r.url] : []));
  if (urls.length > 0) return markdownOf(urls);
  return typeof call.upstream?.text === 'string' ? call.upstream.text : '';
}

const chatBase = (call: SucceededSyncCall) => ({ id: call.taskId, created: call.completedAt, model: call.model });

export function chatBody(call: SucceededSyncCall): ChatAnswerBody {
  return {
    ...chatBase(call),
    object: 'chat.completion' as const,
    choices: [{ index: 0, message: { role: 'assistant' as const, content: contentOf(call) }, finish_reason: 'stop' as const }],
    usage: chatUsageOf(call.upstream),
  };
}

/** The chunks of a streamed chat answer: the role, the content, the finish with `usage` (then `[DONE]`). */
export function chatChunks(call: SucceededSyncCall) {
  const chunk = (delta: Record<string, unknown>, finish: string | null, usage?: ChatUsage) => ({
    ...chatBase(call),
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...(usage ? { usage } : {}),
  });
  return [chunk({ role: 'assistant', content: '' }, null), chunk({ content: contentOf(call) }, null), chunk({}, 'stop', chatUsageOf(call.upstream))];
}
