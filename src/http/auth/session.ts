/**
 * Session-cookie authentication for the user, token and admin routes (spec 5.4): the cookie
 * holds a random id; only its SHA-256 is stored, in the user's event stream.
 */
import '@fastify/cookie';
import type { CookieSerializeOptions } from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.js';
import { GatewayError } from '../errors.js';
import type { GatewayDeps } from '../deps.js';
import type { SessionDoc } from '../../../projections/sessions.js';
import { userStatusOf, type UserDoc } from '../../../projections/users.js';
import { authenticate, bearerKey } from './bearer.js';
import { sha256 } from './secrets.js';
import { VIEWS } from '../../../projections/views.js';

export const SESSION_COOKIE = 'gw_session';

/**
 * Attributes of the session cookie. `Secure` follows SESSION_COOKIE_SECURE: `auto` when the
 * request came over https — behind a TLS-terminating proxy that is its X-Forwarded-Proto,
 * believed only from a proxy TRUST_PROXY names.
 */
export function sessionCookieOptions(request: FastifyRequest, config: Pick<Config, 'sessionCookieSecure' | 'sessionTtlSeconds'>): CookieSerializeOptions {
  const secure = config.sessionCookieSecure === 'always' || (config.sessionCookieSecure === 'auto' && request.protocol === 'https');
  return { path: '/', httpOnly: true, sameSite: 'lax', secure, maxAge: config.sessionTtlSeconds };
}

export interface SessionUser {
  userId: string;
  username: string;
  role: 'admin' | 'user';
  group: string;
  accountId: string;
  sessionHash: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    sessionUser?: SessionUser;
  }
}

/** The signed-in user; undefined without a live session (or when the user was deleted); 403 `user_disabled` for a disabled user. */
async function sessionUserOf(request: FastifyRequest, deps: GatewayDeps): Promise<SessionUser | undefined> {
  const id = request.cookies[SESSION_COOKIE];
  if (!id) return undefined;
  const sessionHash = sha256(id);
  const session = await deps.views.get<SessionDoc>(VIEWS.sessions, sessionHash);
  if (!session || session.doc.expiresAt * 1000 <= deps.clock().getTime()) return undefined;
  const user = await deps.views.get<UserDoc>(VIEWS.users, session.doc.userId);
  if (!user || userStatusOf(user.doc) === 'deleted') return undefined;
  if (userStatusOf(user.doc) === 'disabled') throw new GatewayError(403, 'user_disabled', 'this user is disabled');
  const { userId, username, role, group, accountId } = user.doc;
  return { userId, username, role, group, accountId, sessionHash };
}

/** preHandler: a logged-in user (any role, or admin only). */
export function requireSession(deps: GatewayDeps, role: 'user' | 'admin' = 'user') {
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const user = await sessionUserOf(request, deps);
    if (!user) throw new GatewayError(401, 'unauthorized', 'login required: no valid session cookie');
    if (role === 'admin' && user.role !== 'admin') throw new GatewayError(403, 'forbidden', 'this route needs an administrator');
    request.sessionUser = user;
  };
}

export function currentUser(request: FastifyRequest): SessionUser {
  if (!request.sessionUser) throw new GatewayError(401, 'unauthorized', 'login required: no valid session cookie');
  return request.sessionUser;
}

/** The caller of a route that takes an API key or a session: its account, and whether it is a session of an administrator. */
export async function keyOrSessionCaller(request: FastifyRequest, deps: GatewayDeps): Promise<{ accountId: string; admin: boolean }> {
  if (bearerKey(request)) return { accountId: (await authenticate(request, deps.tokens, deps.clock())).accountId, admin: false };
  const user = await sessionUserOf(request, deps);
  if (!user) throw new GatewayError(401, 'unauthorized', 'login required: a session cookie or a Bearer API key');
  return { accountId: user.accountId, admin: user.role === 'admin' };
}
