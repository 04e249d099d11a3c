/** Token management (spec 4.1): session-authenticated CRUD; keys are returned once, stored hashed. */
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { streams, type TokenSettings } from '../../domain/events.js';
import { newId } from '../../domain/ids.js';
import { appendEvents } from '../../engine/append.js';
import type { TokenDoc } from '../../../projections/tokens.js';
import { newApiKey, sha256 } from '../auth/secrets.js';
import { currentUser, requireSession, type SessionUser } from '../auth/session.js';
import type { GatewayDeps } from '../deps.js';
import { GatewayError } from '../errors.js';
import { metadataFor } from '../request-meta.js';
import { envelope, ok } from '../api-response.js';
import { CreateTokenBody, TokenRecord, tokenRecord, UpdateTokenBody } from './token-schema.js';

type TokenInput = z.infer<typeof CreateTokenBody>;

const ListQuery = z.object({ p: z.coerce.number().int().min(0).default(0), size: z.coerce.number().int().min(1).max(100).default(20) });

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
  return s;
}

export function tokenRoutes(deps: GatewayDeps): FastifyPluginAsync {
  /** Group and channel rules: a user's tokens act in the user's group; an admin may pick any. */
  function checkSettings(user: SessionUser, s: Partial<TokenSettings>, nowSeconds: number): void {
    if (s.group !== undefined && s.group !== '' && s.group !== user.group && user.role !== 'admin') {
      throw new GatewayError(403, 'forbidden', `group: only an administrator may set a group other than ${user.group}`, 'group');
    }
    if (s.expiredTime !== undefined && s.expiredTime !== -1 && s.expiredTime <= nowSeconds) {
      throw new GatewayError(400, 'invalid_request', 'expired_time: must be -1 (never) or a time in the future', 'expired_time');
    }
    if (s.channelId) {
      const channel = deps.catalog.channel(s.channelId);
      const group = s.group || user.group;
      if (!channel || (channel.groups.length > 0 && !channel.groups.includes(group))) {
        throw new GatewayError(400, 'invalid_request', `channel_id: no channel ${s.channelId} serves group ${group}`, 'channel_id');
      }
    }
  }

  async function ownToken(user: SessionUser, id: string): Promise<TokenDoc> {
    const found = await deps.views.get<TokenDoc>('tokens', id);
    // Another user's token is indistinguishable from a missing one.
    if (!found || found.doc.userId !== user.userId) throw new GatewayError(404, 'not_found', `id: no token ${id}`, 'id');
    return found.doc;
  }

  return async (plain) => {
    const app = plain.withTypeProvider<ZodTypeProvider>();
    app.addHook('preHandler', requireSession(deps));

    app.get('/api/token/', { schema: { tags: ['tokens'], querystring: ListQuery } }, async (request) => {
      const user = currentUser(request);
      const { p, size } = request.query;
      const [docs, total] = await Promise.all([
        deps.views.find<TokenDoc>('tokens', { userId: user.userId }, { sortBy: 'createdAt', desc: true, limit: size, offset: p * size }),
        deps.views.count('tokens', { userId: user.userId }),
      ]);
      return ok({ items: docs.map((d) => tokenRecord(d.doc)), total, page: p, page_size: size });
    });

    app.post('/api/token/', { schema: { tags: ['tokens'], body: CreateTokenBody, response: { 200: envelope(TokenRecord) } } }, async (request) => {
      const user = currentUser(request);
      const now = deps.clock();
      const given = toSettings(request.body);
      checkSettings(user, given, Math.floor(now.getTime() / 1000));
      const key = newApiKey();
      const tokenId = newId('tok', 16);
      const settings: TokenSettings = {
        name: '',
        status: 1,
        expiredTime: -1,
        remainQuota: 0,
        // Without a cap the key spends from the account balance: the account is the limit.
        unlimitedQuota: given.remainQuota === undefined,
        modelLimits: [],
        allowIps: [],
        channelId: null,
        ...given,
        group: given.group || user.group,
      };
      const result = await appendEvents(
        deps.events,
        streams.token(tokenId),
        [{ type: 'TokenCreated', data: { ...settings, tokenId, accountId: user.accountId, userId: user.userId, keyHash: sha256(key), keyTail: key.slice(-4) } }],
        { expectedRevision: 'no_stream', metadata: metadataFor(request, now, { accountId: user.accountId }) },
      );
      await deps.runner.waitFor(result.position);
      const created = await deps.views.get<TokenDoc>('tokens', tokenId);
      return ok(tokenRecord(created!.doc, key));
    });

    app.put('/api/token/', { schema: { tags: ['tokens'], body: UpdateTokenBody, response: { 200: envelope(TokenRecord) } } }, async (request) => {
      const user = currentUser(request);
      const now = deps.clock();
      const { id, ...fields } = request.body;
      await ownToken(user, id);
      const changes = toSettings(fields);
      checkSettings(user, changes, Math.floor(now.getTime() / 1000));
      if (changes.group === '') changes.group = user.group;
      if (Object.keys(changes).length > 0) {
        const result = await appendEvents(deps.events, streams.token(id), [{ type: 'TokenUpdated', data: { changes } }], {
          expectedRevision: 'stream_exists',
          metadata: metadataFor(request, now, { accountId: user.accountId }),
        });
        await deps.runner.waitFor(result.position);
      }
      return ok(tokenRecord(await ownToken(user, id)));
    });

    app.delete('/api/token/:id', { schema: { tags: ['tokens'], params: z.object({ id: z.string().min(1) }) } }, async (request) => {
      const user = currentUser(request);
      const { id } = request.params;
      await ownToken(user, id);
      const result = await appendEvents(deps.events, streams.token(id), [{ type: 'TokenDeleted', data: { tokenId: id } }], {
        expectedRevision: 'stream_exists',
        metadata: metadataFor(request, deps.clock(), { accountId: user.accountId }),
      });
      await deps.runner.waitFor(result.position);
      return ok(null, 'token deleted');
    });
  };
}
