/**
 * Bearer-token authentication for every generation, query and model-listing route (spec 5).
 * Refusals: 401 for a missing, unknown or expired key, or one of a deleted user; 403 for a
 * disabled, exhausted or IP-refused token, a disabled user's, and for a model the token may not
 * use. Nothing is appended on refusal.
 */
import type { BlockList } from 'node:net';
import type { FastifyRequest } from 'fastify';
import { GatewayError } from '../errors.js';
import { tokenQuotaLimit, type TokenDoc } from '../../../projections/tokens.js';
import type { Catalog } from '../../engine/channels/catalog.js';
import type { TokenCache } from './token-cache.js';
import { allows, buildAllowList } from './ip-allow-list.js';
import { sha256 } from './secrets.js';
import type { Caller } from '../../engine/accounts/caller.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who the API key belongs to, on the routes declaring `config.auth: 'bearer'` (route-config.ts). */
    caller: Caller;
  }
}

const allowLists = new Map<string, { entries: string; list: BlockList }>();

function allowListOf(token: TokenDoc): BlockList {
  const entries = token.allowIps.join(',');
  const cached = allowLists.get(token.tokenId);
  if (cached && cached.entries === entries) return cached.list;
  const list = buildAllowList(token.allowIps);
  allowLists.set(token.tokenId, { entries, list });
  return list;
}

export function bearerKey(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

export async function authenticate(request: FastifyRequest, tokens: TokenCache, now: Date): Promise<Caller> {
  // Once per request (route-config.ts authenticates the routes declaring `auth: 'bearer'`).
  if (request.caller) return request.caller;
  const key = bearerKey(request);
  if (!key) throw new GatewayError(401, 'unauthorized', 'Authorization: a Bearer API key is required', 'Authorization');
  const token = await tokens.byKeyHash(sha256(key));
  if (!token) throw new GatewayError(401, 'invalid_api_key', 'Authorization: the API key is not valid', 'Authorization');
  const userStatus = await tokens.userStatus(token.userId);
  if (userStatus === 'deleted') throw new GatewayError(401, 'invalid_api_key', 'Authorization: the API key is not valid', 'Authorization');
  if (userStatus === 'disabled') throw new GatewayError(403, 'user_disabled', "Authorization: the API key's user is disabled", 'Authorization');
  if (token.status !== 1) throw new GatewayError(403, 'token_disabled', 'Authorization: the API key is disabled', 'Authorization');
  if (token.expiredTime !== -1 && token.expiredTime * 1000 <= now.getTime()) {
    throw new GatewayError(401, 'token_expired', 'Authorization: the API key has expired', 'Authorization');
  }
  // A spent cap limits spending (submits: `assertTokenCovers` and the account aggregate), never
  // reading: the key still polls and downloads what it paid for.
  if (token.allowIps.length > 0 && !allows(allowListOf(token), request.ip)) {
    throw new GatewayError(403, 'ip_not_allowed', `Authorization: the API key may not be used from ${request.ip}`, 'Authorization');
  }
  request.caller = {
    tokenId: token.tokenId,
    accountId: token.accountId,
    userId: token.userId,
    group: token.group,
    modelLimits: token.modelLimits,
    channelId: token.channelId,
    remainQuota: token.remainQuota,
    quotaLimit: tokenQuotaLimit(token),
    unlimitedQuota: token.unlimitedQuota,
  };
  return request.caller;
}

/** The token's model limits and group must allow the model, and a channel must serve it. */
export function assertModelAllowed(caller: Caller, model: string, catalog: Catalog): void {
  if (caller.modelLimits.length > 0 && !caller.modelLimits.includes(model)) {
    throw new GatewayError(403, 'model_not_allowed', `model: this API key may not use ${model}`, 'model');
  }
  const channels = catalog.channelsFor(model, caller.group);
  const usable = caller.channelId ? channels.filter((c) => c.channelId === caller.channelId) : channels;
  if (usable.length === 0) {
    throw new GatewayError(403, 'model_not_available', `model: ${model} is not available to group ${caller.group}`, 'model');
  }
  if (!catalog.prices().models[model]) {
    throw new GatewayError(403, 'model_not_priced', `model: ${model} has no price configured`, 'model');
  }
}

/** The models this API key may use: its group's, within its model limits and its channel's. */
export function modelsForCaller(caller: Caller, catalog: Catalog): string[] {
  return catalog
    .modelsFor(caller.group)
    .filter((m) => caller.modelLimits.length === 0 || caller.modelLimits.includes(m))
    .filter((m) => !caller.channelId || catalog.channel(caller.channelId)?.models.includes(m));
}
