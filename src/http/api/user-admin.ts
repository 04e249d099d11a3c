/**
 * Administering users: `/api/user/:id…` for administrators (look up, change group, disable,
 * enable, delete, reset the password). Each change is an event on the user's stream
 * (domain/user.ts decides, and refuses: a deleted user, an administrator's own user); the
 * answer is the user as the views show it once they hold the change.
 */
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { UserCommand } from '../../domain/user.js';
import { changeUserGroup, executeUserCommand } from '../../engine/accounts/user-admin.js';
import type { AccountDoc } from '../../../projections/accounts.js';
import type { UserDoc } from '../../../projections/users.js';
import { VIEWS } from '../../../projections/views.js';
import { nowSeconds } from '../../lib/time.js';
import { hashPassword } from '../auth/password.js';
import { currentUser, requireSession } from '../auth/session.js';
import type { GatewayDeps } from '../deps.js';
import { GatewayError } from '../errors.js';
import { metadataFor } from '../request-meta.js';
import { API_ROUTE, envelope, ok } from '../api-response.js';
import { GroupName, Password, UserRow, userRow } from './user-schema.js';

/**
 * A user id (`usr_` and base62, domain/ids.ts). The route's path holds the same pattern, so
 * `/api/user/self`, `/api/user/login` and the other fixed paths beside these routes are never
 * taken for an id (nor their `Allow` header widened by these methods).
 */
const USER_ID = '^usr_[A-Za-z0-9]{1,64}$';
const USER_PATH = `/api/user/:id(${USER_ID})`;
const Params = z.object({ id: z.string().regex(new RegExp(USER_ID), 'must be a user id (usr_…)') });
const GroupBody = z.object({ group: GroupName }).strict();
const DisableBody = z.object({ reason: z.string().max(500, 'must be at most 500 characters').default('') }).strict();
const PasswordBody = z.object({ password: Password }).strict();

export function userAdminRoutes(deps: GatewayDeps): FastifyPluginAsyncZod {
  async function rowOf(userId: string): Promise<UserRow> {
    const user = await deps.views.get<UserDoc>(VIEWS.users, userId);
    if (!user) throw new GatewayError(404, 'not_found', `id: no user ${userId}`, 'id');
    const account = await deps.views.get<AccountDoc>(VIEWS.accounts, user.doc.accountId);
    return userRow(user.doc, account?.doc);
  }

  return async (app) => {
    app.addHook('preHandler', requireSession(deps, 'admin'));
    const route = <B extends z.ZodTypeAny>(body: B, summary: string) => ({
      config: API_ROUTE,
      schema: { tags: ['users'], summary, params: Params, body, response: { 200: envelope(UserRow) } },
    });
    const bodiless = (summary: string) => ({ config: API_ROUTE, schema: { tags: ['users'], summary, params: Params, response: { 200: envelope(UserRow) } } });

    /** Runs a command on the user's stream (after checking the user exists) and answers the user once the views show it. */
    async function change(request: FastifyRequest, userId: string, command: UserCommand) {
      const before = await rowOf(userId);
      const result = await executeUserCommand(deps, before.id, command, metadataFor(request, deps.clock(), { accountId: before.account_id }));
      if (result.position !== undefined) await deps.runner.waitFor(result.position);
      return ok(await rowOf(before.id));
    }

    app.get(USER_PATH, { config: API_ROUTE, schema: { tags: ['users'], params: Params, response: { 200: envelope(UserRow) } } }, async (request) =>
      ok(await rowOf(request.params.id)),
    );

    app.put(USER_PATH, route(GroupBody, "Change a user's group (their keys in the old group move with them)"), async (request) => {
      const before = await rowOf(request.params.id);
      const admin = currentUser(request);
      const now = deps.clock();
      const position = await changeUserGroup(
        { ...deps, config: deps.config },
        { userId: admin.userId, role: admin.role, group: admin.group },
        before.id,
        request.body.group,
        nowSeconds(() => now),
        metadataFor(request, now, { accountId: before.account_id }),
      );
      if (position !== undefined) await deps.runner.waitFor(position);
      return ok(await rowOf(before.id));
    });

    app.post(`${USER_PATH}/disable`, route(DisableBody, 'Disable a user: no login, every key refused, tasks in flight finish'), (request) =>
      change(request, request.params.id, { type: 'DisableUser', data: { by: currentUser(request).userId, reason: request.body.reason } }),
    );

    app.post(`${USER_PATH}/enable`, bodiless('Enable a disabled user'), (request) =>
      change(request, request.params.id, { type: 'EnableUser', data: { by: currentUser(request).userId } }),
    );

    app.delete(USER_PATH, bodiless('Delete a user (soft: their history stays for the audit)'), (request) =>
      change(request, request.params.id, { type: 'DeleteUser', data: { by: currentUser(request).userId } }),
    );

    app.post(`${USER_PATH}/password`, route(PasswordBody, "Reset a user's password (ends their sessions)"), async (request) => {
      const passwordHash = await hashPassword(request.body.password);
      return change(request, request.params.id, { type: 'ChangePassword', data: { passwordHash, by: currentUser(request).userId } });
    });
  };
}
