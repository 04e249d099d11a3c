/** Admin price table: `GET/PUT /api/pricing` (each PUT appends the whole resulting table). */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ModelPrice, type PriceTable } from '../../domain/events.js';
import { changePrices } from '../../engine/commands/price-commands.js';
import { requireSession } from '../auth/session.js';
import type { GatewayDeps } from '../deps.js';
import { metadataFor } from '../request-meta.js';
import { API_ROUTE, ok } from '../api-response.js';

/**
 * A record keyed by names, never empty. The key rule is the key schema's (`propertyNames` in
 * JSON Schema), which OpenAPI 3.0 lacks: the document says it as "no property named ''".
 */
const byName = <V extends z.ZodType>(value: V) => z.record(z.string().min(1), value).meta({ properties: { '': { not: {} } } });

const PricingBody = z
  .object({
    /** Prices to set; `null` removes a model's price. */
    models: byName(ModelPrice.strict().nullable()).default({}),
    /** Group ratios in permille (1000 = 1.0); `null` removes a group's ratio. */
    group_ratios: byName(z.number().int().min(0).nullable()).default({}),
  })
  .strict();

const view = (t: PriceTable) => ({ models: t.models, group_ratios: t.groupRatios });

export function pricingRoutes(deps: GatewayDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.addHook('preHandler', requireSession(deps, 'admin'));

    app.get('/api/pricing', { config: API_ROUTE, schema: { tags: ['admin'] } }, async () => ok(view(deps.catalog.prices())));

    app.put('/api/pricing', { config: API_ROUTE, schema: { tags: ['admin'], body: PricingBody } }, async (request) => {
      const { models, group_ratios: groupRatios } = request.body;
      await deps.runner.waitFor(await changePrices(deps.events, { models, groupRatios }, metadataFor(request, deps.clock())));
      await deps.catalog.refresh();
      return ok(view(deps.catalog.prices()));
    });
  };
}
