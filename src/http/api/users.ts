/** Users and login sessions: `/api/user/…` (issue: users are event-sourced like everything). */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { endSession, startSession } from '../../engine/commands/session-commands.js';
import { registerUser } from '../../engine/accounts/users.js';
import type { AccountDoc } from '../../../projections/accounts.js';
import { userStatusOf, type UserDoc } from '../../../projections/users.js';
import type { SessionDoc } from '../../../projections/sessions.js';
import { executeUserCommand } from '../../engine/accounts/user-admin.js';
import { nowSeconds } from '../../lib/time.js';
import { GroupName, Password, Username, UserRow, userRow } from './user-schema.js';
import { hashPassword, verifyPassword } from '../auth/password.js';
import { newSessionId, sha256 } from '../auth/secrets.js';
import { loginThrottle } from '../auth/login-throttle.js';
import { currentUser, requireSession, SESSION_COOKIE, sessionCookieOptions } from '../auth/session.js';
import type { GatewayDeps } from '../deps.js';
import { GatewayError } from '../errors.js';
import { metadataFor } from '../request-meta.js';
import { API_ROUTE, envelope, ok, pageOf, pageQuery } from '../api-response.js';
import { VIEWS } from '../../../projections/views.js';

/** Bounded strings: scrypt never derives from more than 128 characters of password. */
const LoginBody = z.object({ username: z.string().min(1).max(64), password: z.string().min(1).max(128) });
/** A login body is two short strings; a few KiB is plenty (the server-wide limit is 40 MiB). */
const LOGIN_BODY_LIMIT = 4 * 1024;
const CreateUserBody = z.object({
  username: Username,
  password: Password,
  group: GroupName.default('default'),
  role: z.enum(['user', 'admin']).default('user'),
});
const ChangePasswordBody = z.object({ old_password: z.string().min(1).max(128), new_password: Password }).strict();
/** A session as its user sees it: the start of its hash names it (the cookie never leaves the browser). */
const SESSION_ID_CHARS = 12;
const SessionRow = z.object({ id: z.string(), current: z.boolean(), started_at: z.string().nullable(), expires_at: z.number().int() });
const UserRecord = z.object({ id: z.string(), username: z.string(), role: z.enum(['admin', 'user']), group: z.string() });
const ListQuery = z.object(pageQuery());

export async function findUserByName(deps: GatewayDeps, username: string): Promise<UserDoc | undefined> {
  const [found] = await deps.views.find<UserDoc>(VIEWS.users, { usernameKey: username.toLowerCase() }, { limit: 1 });
  return found?.doc;
}

export function userRoutes(deps: GatewayDeps): FastifyPluginAsyncZod {
  return async (app) => {
    const throttle = await loginThrottle(app, deps.config);

    const loginRoute = {
      // A wrong username or password is 401 (invalid_credentials).
      config: { ...API_ROUTE, errorStatuses: [401, 403] },
      schema: { tags: ['users'], body: LoginBody, response: { 200: envelope(UserRecord) } },
      bodyLimit: LOGIN_BODY_LIMIT,
      onRequest: throttle.byAddress,
      preHandler: throttle.byUsername,
    };
    app.post('/api/user/login', loginRoute, async (request, reply) => {
      const { username, password } = request.body;
      const found = await findUserByName(deps, username);
      // A deleted user is no user to log in as.
      const user = found && userStatusOf(found) !== 'deleted' ? found : undefined;
      // Verify against a dummy hash when the user is unknown so timing does not reveal names.
      const valid = await verifyPassword(password, user?.passwordHash ?? dummyHash);
      if (!user || !valid) throw new GatewayError(401, 'invalid_credentials', 'username or password is wrong');
      // Told only to whoever knows the password.
      if (userStatusOf(user) === 'disabled') throw new GatewayError(403, 'user_disabled', 'this user is disabled; ask an administrator');
      const sessionId = newSessionId();
      const now = deps.clock();
      const expiresAt = Math.floor(now.getTime() / 1000) + deps.config.sessionTtlSeconds;
      const position = await startSession(deps.events, user.userId, { sessionHash: sha256(sessionId), expiresAt }, metadataFor(request, now));
      if (position !== undefined) await deps.runner.waitFor(position);
      reply.setCookie(SESSION_COOKIE, sessionId, sessionCookieOptions(request, deps.config));
      return ok({ id: user.userId, username: user.username, role: user.role, group: user.group });
    });

    app.post('/api/user/logout', { config: API_ROUTE, schema: { tags: ['users'] }, bodyLimit: LOGIN_BODY_LIMIT }, async (request, reply) => {
      const id = request.cookies[SESSION_COOKIE];
      if (id) {
        const sessionHash = sha256(id);
        const session = await deps.views.get<{ userId: string }>(VIEWS.sessions, sessionHash);
        if (session) {
          const position = await endSession(deps.events, session.doc.userId, sessionHash, metadataFor(request, deps.clock()));
          if (position !== undefined) await deps.runner.waitFor(position);
        }
      }
      // The same attributes as when it was set (clearCookie overrides the lifetime).
      reply.clearCookie(SESSION_COOKIE, sessionCookieOptions(request, deps.config));
      return ok(null, 'logged out');
    });

    app.get('/api/user/self', { config: API_ROUTE, schema: { tags: ['users'] }, preHandler: requireSession(deps) }, async (request) => {
      const user = currentUser(request);
      const account = await deps.views.get<AccountDoc>(VIEWS.accounts, user.accountId);
      const a = account?.doc;
      return ok({
        id: user.userId,
        username: user.username,
        role: user.role,
        group: user.group,
        account_id: user.accountId,
        quota: a?.available ?? 0,
        used_quota: a?.usedQuota ?? 0,
        balance: a?.balance ?? 0,
        reserved_quota: a?.reserved ?? 0,
      });
    });

    app.post(
      '/api/user/',
      { config: API_ROUTE, schema: { tags: ['users'], body: CreateUserBody }, preHandler: requireSession(deps, 'admin') },
      async (request) => {
        const { username, password, group, role } = request.body;
        // A name already held is refused by its stream's decider: 409 `username_taken`.
        const created = await registerUser(deps, { username, passwordHash: await hashPassword(password), role, group }, metadataFor(request, deps.clock()));
        await deps.runner.waitFor(created.position);
        return ok({ id: created.userId, username, role, group, account_id: created.accountId });
      },
    );

    app.get(
      '/api/user/',
      {
        config: API_ROUTE,
        schema: { tags: ['users'], querystring: ListQuery, response: { 200: envelope(pageOf(UserRow)) } },
        preHandler: requireSession(deps, 'admin'),
      },
      async (request) => {
        const { p, size } = request.query;
        const [users, total] = await Promise.all([
          deps.views.find<UserDoc>(VIEWS.users, {}, { sortBy: 'createdAt', limit: size, offset: p * size }),
          deps.views.count(VIEWS.users, {}),
        ]);
        const accounts = new Map(
          (
            await deps.views.getMany<AccountDoc>(
              VIEWS.accounts,
              users.map((u) => u.doc.accountId),
            )
          ).map((a) => [a.id, a.doc] as const),
        );
        return ok({ items: users.map((u) => userRow(u.doc, accounts.get(u.doc.accountId))), total, page: p, page_size: size });
      },
    );

    app.post(
      '/api/user/self/password',
      {
        config: { ...API_ROUTE, errorStatuses: [403] },
        schema: { tags: ['users'], summary: 'Change your own password (ends your other sessions)', body: ChangePasswordBody },
        bodyLimit: LOGIN_BODY_LIMIT,
        preHandler: requireSession(deps),
      },
      async (request) => {
        const user = currentUser(request);
        const { old_password, new_password } = request.body;
        const doc = (await deps.views.get<UserDoc>(VIEWS.users, user.userId))?.doc;
        if (!doc || !(await verifyPassword(old_password, doc.passwordHash))) {
          throw new GatewayError(403, 'wrong_password', 'old_password: is not your current password', 'old_password');
        }
        const passwordHash = await hashPassword(new_password);
        const result = await executeUserCommand(
          deps,
          user.userId,
          { type: 'ChangePassword', data: { passwordHash, by: user.userId, keepSession: user.sessionHash } },
          metadataFor(request, deps.clock(), { accountId: user.accountId }),
        );
        if (result.position !== undefined) await deps.runner.waitFor(result.position);
        return ok(null, 'password changed; your other sessions have ended');
      },
    );

    app.get(
      '/api/user/self/sessions',
      {
        config: API_ROUTE,
        schema: { tags: ['users'], summary: 'Your open sessions', response: { 200: envelope(z.array(SessionRow)) } },
        preHandler: requireSession(deps),
      },
      async (request) => {
        const user = currentUser(request);
        const now = nowSeconds(deps.clock);
        const sessions = await deps.views.find<SessionDoc>(VIEWS.sessions, { userId: user.userId }, { limit: 1000 });
        return ok(
          sessions
            .filter((s) => s.doc.expiresAt > now)
            .map((s) => ({
              id: s.id.slice(0, SESSION_ID_CHARS),
              current: s.id === user.sessionHash,
              started_at: s.doc.startedAt ?? null,
              expires_at: s.doc.expiresAt,
            })),
        );
      },
    );
  };
}

// A valid scrypt hash of a random password, for constant-time refusals of unknown users.
const dummyHash = await hashPassword(newSessionId());
