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

const ListQuery = z.object({
  ...pageQuery(),
  /** An administrator lists another user's keys. */
  user_id: z.string().min(1).max(64).optional(),
});

const actorOf = (user: SessionUser): TokenActor => ({ userId: user.userId, role: user.role, group: user.group });

const toSettings = (input: TokenInput): Partial<TokenSettings> => camelFields(input);

/**
 * The rules on who may set what (group, expiry, channel) and whose token it is are the token
 * aggregate's (src/domain/token.ts); the routes map the API's fields and read the view.
 */
export function tokenRoutes(deps: GatewayDeps): FastifyPluginAsyncZod {
  async function ownToken(user: SessionUser, id: string): Promise<TokenDoc> {
    const found = await deps.views.get<TokenDoc>(VIEWS.tokens, id);
    // Another user's token is indistinguishable from a missing one, except to an administrator.
    if (!found || (found.doc.userId !== user.userId && user.role !== 'admin')) throw new GatewayError(404, 'not_found', `id: no token ${id}`, 'id');
    return found.doc;
  }

  /** The account a change of the token is recorded for: its owner's, whoever (an administrator) made it. */
  async function accountOfToken(user: SessionUser, id: string): Promise<string> {
    if (user.role !== 'admin') return user.accountId;
    return (await deps.views.get<TokenDoc>(VIEWS.tokens, id))?.doc.accountId ?? user.accountId;
  }

  return async (app) => {
    app.addHook('preHandler', requireSession(deps));

    app.get('/api/token/', { config: API_ROUTE, schema: { tags: ['tokens'], querystring: ListQuery } }, async (request) => {
      const user = currentUser(request);
      const { user_id: userId } = request.query;
      if (userId !== undefined && userId !== user.userId && user.role !== 'admin') {
        throw new GatewayError(403, 'forbidden', "user_id: only an administrator may list another user's keys", 'user_id');
      }
      const where = { userId: userId ?? user.userId };
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
          metadataFor(request, now, { accountId: await accountOfToken(user, id) }),
        );
        if (position !== undefined) await deps.runner.waitFor(position);
        return ok(tokenRecord(await ownToken(user, id)));
      },
    );

    app.delete('/api/token/:id', { config: API_ROUTE, schema: { tags: ['tokens'], params: z.object({ id: z.string().min(1) }) } }, async (request) => {
      const user = currentUser(request);
      const { id } = request.params;
      const accountId = await accountOfToken(user, id);
      await deps.runner.waitFor(await deleteToken(deps, actorOf(user), id, metadataFor(request, deps.clock(), { accountId })));
      return ok(null, 'token deleted');
    });
  };
}
