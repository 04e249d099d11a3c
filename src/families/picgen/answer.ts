/**
 * The answer of a synchronous picgen call (spec 4.7 / 4.8: `{created, data:[{url, b64_json}]}`),
 * rendered from the call's record (engine/tasks/sync-record.ts) so the call, its idempotent retries
 * and the query by id answer the same body. What the record alone does not tell — the order of
 * the images the gateway could not fetch among the re-hosted ones, and whether Base64 was asked
 * for — is kept with the upstream snapshot under `answer` when the call completes.
 */
import { z } from 'zod';
import { resultBase64, type SucceededSyncCall } from '../../engine/tasks/sync-record.js';
import type { GatewayDeps } from '../../http/deps.js';
import type { ImageSlot } from '../kit/sync-results.js';
import type { PicgenAnswerBody } from './schema.js';

const Layout = z.object({
  responseFormat: z.enum(['url', 'b64_json']),
  /** Each item: a re-hosted result (its index), or an upstream URL the gateway could not fetch. */
  items: z.array(z.union([z.object({ result: z.number().int().min(0) }), z.object({ url: z.string() })])),
});
type Layout = z.infer<typeof Layout>;

/** What goes into TaskSucceeded.upstream.answer for `picgenBody`. */
export function picgenLayout(slots: readonly ImageSlot[], responseFormat: 'url' | 'b64_json'): Layout {
  return { responseFormat, items: slots.map((slot) => ('result' in slot ? { result: slot.result } : { url: slot.url })) };
}

export async function picgenBody(deps: GatewayDeps, call: SucceededSyncCall): Promise<PicgenAnswerBody> {
  const parsed = Layout.safeParse(call.upstream?.answer);
  // A record without a layout (none is ever written so): every result in order, as URLs.
  const layout: Layout = parsed.success ? parsed.data : { responseFormat: 'url', items: call.results.map((_, result) => ({ result })) };
  const data = await Promise.all(
    layout.items.map(async (item) => {
      if ('url' in item) return { url: item.url };
      const r = call.results[item.result];
      if (!r) return { url: '' };
      const url = r.url ?? '';
      return layout.responseFormat === 'b64_json' ? { url, b64_json: await resultBase64(deps, call, r) } : { url };
    }),
  );
  return { created: call.completedAt, data };
}
