/** Token management (spec 4.1): session-authenticated CRUD; keys are returned once, stored hashed. */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { TokenSettings } from '../../domain/events.js';
import type { TokenActor } from '../../domain/token.js';
import { createToken, deleteToken, updateToken } from '../../engine/commands/token-commands.js';
import type { TokenDoc } from '../../../projections/tokens.js';
import { newApiKey, sha256 } from '../auth/secrets.js';
import { currentUser, requireSession, type SessionUser } from '../auth/session.js';
import type { GatewayDeps } from '../deps.js';
import { GatewayError } from '../errors.js';
import { metadataFor } from '../request-meta.js';
import { API_ROUTE, envelope, ok } from '../api-response.js';
import { CreateTokenBody, TokenRecord, tokenRecord, UpdateTokenBody } from './token-schema.js';
import { nowSeconds } from '../../lib/time.js';
import { VIEWS } from '../../../projections/views.js';

type TokenInput = z.infer<typeof CreateTokenBody>;

const ListQuery = z.object({ p: z.coerce.number().int().min(0).default(0), size: z.coerce.number().int().min(1).max(100).default(20) });

const actorOf = (user: SessionUser): TokenActor => ({ userId: user.userId, role: user.role, group: user.group });

function toSettings(input: TokenInput): Partial<TokenSettings> {
  const s: Partial<TokenSettings> = {};
  if (input.name !== undefined) s.name = input.name;
  if (input.status !== undefined) s.status = input.status;
  if (input.expired_time !== undefined) s.expiredTime = input.expired_time;
  if (input.remain_quota !== undefined) s.remainQuota = input.remain_quota;
  if (input.unlimited_quota !== undefined) s.unlimitedQuota = input.unlimited_quota;
  if (input.model_limits !== undefined) s.modelLimits = input.model_limits;
  if (input.group !== undefined) s.group = input.group;
  if (input.allow_ips !== undefined) s.allowIps = input.allow_ips;
  if (input.channel_id !== undefined) s.channelId = input.channel_id;
  if (input.rate_limit_per_minute !== undefined) s.rateLimitPerMinute = input.rate_limit_per_minute;
  return s;
}

/**
 * The rules on who may set what (group, expiry, channel) and whose token it is are the token
 * aggregate's (src/domain/token.ts); the routes map the API's fields and read the view.
 */
export function tokenRoutes(deps: GatewayDeps): FastifyPluginAsyncZod {
  async function ownToken(user: SessionUser, id: string): Promise<TokenDoc> {
    const found = await deps.views.get<TokenDoc>(VIEWS.tokens, id);
    // Another user's token is indistinguishable from a missing one.
    if (!found || found.doc.userId !== user.userId) throw new GatewayError(404, 'not_found', `id: no token ${id}`, 'id');
    return found.doc;
  }

  return async (app) => {
    app.addHook('preHandler', requireSession(deps));

    app.get('/api/token/', { config: API_ROUTE, schema: { tags: ['tokens'], querystring: ListQuery } }, async (request) => {
      const user = currentUser(request);
      const { p, size } = request.query;
      const [docs, total] = await Promise.all([
        deps.views.find<TokenDoc>(VIEWS.tokens, { userId: user.userId }, { sortBy: 'createdAt', desc: true, limit: size, offset: p * size }),
        deps.views.count(VIEWS.tokens, { userId: user.userId }),
      ]);
      return ok({ items: docs.map((d) => tokenRecord(d.doc)), total, page: p, page_size: size });
    });

    app.post(
      '/api/token/',
      { config: API_ROUTE, schema: { tags: ['tokens'], body: CreateTokenBody, response: { 200: envelope(TokenRecord) } } },
      async (request) => {
        const user = currentUser(request);
        const now = deps.clock();
        const key = newApiKey();
        const { tokenId, position } = await createToken(
          deps,
          actorOf(user),
          { accountId: user.accountId, keyHash: sha256(key), keyTail: key.slice(-4), settings: toSettings(request.body) },
          nowSeconds(() => now),
          metadataFor(request, now, { accountId: user.accountId }),
        );
        await deps.runner.waitFor(position);
        const created = await deps.views.get<TokenDoc>(VIEWS.tokens, tokenId);
        return ok(tokenRecord(created!.doc, key));
      },
    );

    app.put(
      '/api/token/',
      { config: API_ROUTE, schema: { tags: ['tokens'], body: UpdateTokenBody, response: { 200: envelope(TokenRecord) } } },
      async (request) => {
        const user = currentUser(request);
        const now = deps.clock();
        const { id, ...fields } = request.body;
        const position = await updateToken(
          deps,
          actorOf(user),
          id,
          toSettings(fields),
          nowSeconds(() => now),
          metadataFor(request, now, { accountId: user.accountId }),
        );
        if (position !== undefined) await deps.runner.waitFor(position);
        return ok(tokenRecord(await ownToken(user, id)));
      },
    );

    app.delete('/api/token/:id', { config: API_ROUTE, schema: { tags: ['tokens'], params: z.object({ id: z.string().min(1) }) } }, async (request) => {
      const user = currentUser(request);
      const { id } = request.params;
      await deps.runner.waitFor(await deleteToken(deps, actorOf(user), id, metadataFor(request, deps.clock(), { accountId: user.accountId })));
      return ok(null, 'token deleted');
    });
  };
}
