/**
 * The price list of the caller's group: `GET /v1/pricing` (API key: the models that key may
 * use) and `GET /api/user/pricing` (session: every model the user's group is served).
 */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { modelsForCaller } from '../auth/bearer.js';
import { currentUser, requireSession } from '../auth/session.js';
import type { GatewayDeps } from '../deps.js';
import { PriceList, priceListFor } from '../price-list.js';
import { API_ROUTE, ok } from '../api-response.js';

/** Registered beside `/v1/models`, in its plain error shape. */
export function keyPriceListRoutes(deps: GatewayDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/v1/pricing',
      {
        config: { auth: 'bearer', errorShape: 'plain' },
        schema: { tags: ['models'], summary: 'Prices of the models this API key may use, for its group', response: { 200: PriceList } },
      },
      async (request) => {
        const { caller } = request;
        return priceListFor(deps.catalog.prices(), caller.group, modelsForCaller(caller, deps.catalog));
      },
    );
  };
}

/** Registered with the session routes (their `{success, message}` errors). */
export function userPriceListRoutes(deps: GatewayDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/api/user/pricing',
      {
        config: API_ROUTE,
        schema: { tags: ['users'], summary: "Prices of every model served to the signed-in user's group" },
        preHandler: requireSession(deps),
      },
      async (request) => {
        const user = currentUser(request);
        return ok(priceListFor(deps.catalog.prices(), user.group, deps.catalog.modelsFor(user.group)));
      },
    );
  };
}
