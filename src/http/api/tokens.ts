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
import { API_ROUTE, camelFields, envelope, listPage, ok, pageQuery } from '../api-response.js';
import { CreateTokenBody, TokenRecord, tokenRecord, UpdateTokenBody } from './token-schema.js';
import { nowSeconds } from '../../lib/time.js';
import { VIEWS } from '../../../projections/views.js';

type TokenInput = z.infer<typeof CreateTokenBody>;

const ListQuery = z.object(pageQuery());

const actorOf = (user: SessionUser): TokenActor => ({ userId: user.userId, role: user.role, group: user.group });

const toSettings = (input: TokenInput): Partial<TokenSettings> => camelFields(input);

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
      const where = { userId: currentUser(request).userId };
      return listPage(deps.views, VIEWS.tokens, where, { sortBy: 'createdAt', desc: true }, request.query, (doc: TokenDoc) => tokenRecord(doc));
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
