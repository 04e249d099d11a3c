/** `GET /v1/models` (spec 4.2): OpenAI list shape, filtered to what the calling token may use. */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { modelsForCaller } from './auth/bearer.js';
import type { GatewayDeps } from './deps.js';

const ModelList = z.object({
  object: z.literal('list'),
  data: z.array(z.object({ id: z.string(), object: z.literal('model'), created: z.number().int(), owned_by: z.string() })),
});

export function modelRoutes(deps: GatewayDeps): FastifyPluginAsyncZod {
  return async (app) => {
    const config = { auth: 'bearer', errorShape: 'plain' } as const;
    app.get('/v1/models', { config, schema: { tags: ['models'], response: { 200: ModelList } } }, async (request) => {
      const { caller } = request;
      const channels = deps.catalog.channels();
      const data = modelsForCaller(caller, deps.catalog).map((id) => {
        const serving = channels.filter((c) => c.models.includes(id));
        const created = Math.min(...serving.map((c) => Math.floor(Date.parse(c.createdAt) / 1000)));
        return { id, object: 'model' as const, created, owned_by: serving[0]?.family ?? 'gateway' };
      });
      return { object: 'list' as const, data };
    });
  };
}
