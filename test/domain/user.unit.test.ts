import { describe, expect, it } from 'vitest';
import { fold } from '../../src/domain/decider.js';
import type { DomainEvent } from '../../src/domain/events.js';
import { decideUser, evolveUser, foldUser, initialUserState, userDecider, type UserCommand, type UserState } from '../../src/domain/user.js';
import { decideUsername, evolveUsername, initialUsernameState } from '../../src/domain/username.js';
import { refused } from '../support/refused.js';

const registration = { userId: 'u1', username: 'Alice', passwordHash: 'x', role: 'user' as const, group: 'default', accountId: 'a1' };
const register: UserCommand = { type: 'RegisterUser', data: registration };
const start = (sessionHash = 's1'): UserCommand => ({ type: 'StartSession', data: { sessionHash, expiresAt: 1_700_000_000 } });
const end = (sessionHash = 's1'): UserCommand => ({ type: 'EndSession', data: { sessionHash } });

function run(...commands: UserCommand[]): UserState {
  let state = initialUserState();
  for (const c of commands) state = decideUser(c, state).reduce(evolveUser, state);
  return state;
}

describe('user decider', () => {
  it('registers once: a repeated registration decides []', () => {
    expect(decideUser(register, initialUserState())).toEqual([{ type: 'UserRegistered', data: registration }]);
    expect(decideUser(register, run(register))).toEqual([]);
  });

  it('starts a session once and ends it once', () => {
    expect(decideUser(start(), run(register))).toEqual([{ type: 'UserSessionStarted', data: { sessionHash: 's1', expiresAt: 1_700_000_000 } }]);
    expect(decideUser(start(), run(register, start()))).toEqual([]);
    expect(decideUser(end(), run(register, start()))).toEqual([{ type: 'UserSessionEnded', data: { sessionHash: 's1' } }]);
    expect(decideUser(end(), run(register, start(), end()))).toEqual([]);
    expect(decideUser(end('never-started'), run(register))).toEqual([]);
  });

  it('disabling ends every session, starts none, appends once; enabling undoes it', () => {
    const disable: UserCommand = { type: 'DisableUser', data: { by: 'admin', reason: 'spam' } };
    expect(decideUser(disable, run(register, start('s1'), start('s2')))).toEqual([
      { type: 'UserDisabled', data: { by: 'admin', reason: 'spam' } },
      { type: 'UserSessionEnded', data: { sessionHash: 's1' } },
      { type: 'UserSessionEnded', data: { sessionHash: 's2' } },
    ]);
    const disabled = run(register, start(), disable);
    expect(disabled.status).toBe('disabled');
    expect(disabled.openSessions.size).toBe(0);
    expect(decideUser(disable, disabled)).toEqual([]);
    expect(() => decideUser(start('s3'), disabled)).toThrow(refused('forbidden', 'user_disabled'));
    const enabled = run(register, disable, { type: 'EnableUser', data: { by: 'admin' } });
    expect(enabled.status).toBe('enabled');
    expect(decideUser({ type: 'EnableUser', data: { by: 'admin' } }, enabled)).toEqual([]);
  });

  it('an administrator cannot disable or delete their own user; a deleted user changes no more', () => {
    expect(() => decideUser({ type: 'DisableUser', data: { by: 'u1', reason: '' } }, run(register))).toThrow(refused('conflict', 'cannot_change_self'));
    expect(() => decideUser({ type: 'DeleteUser', data: { by: 'u1' } }, run(register))).toThrow(refused('conflict', 'cannot_change_self'));
    const deleted = run(register, start(), { type: 'DeleteUser', data: { by: 'admin' } });
    expect(deleted.status).toBe('deleted');
    expect(deleted.openSessions.size).toBe(0);
    for (const command of [
      { type: 'EnableUser', data: { by: 'admin' } },
      { type: 'ChangeGroup', data: { group: 'vip', by: 'admin' } },
      { type: 'ChangePassword', data: { passwordHash: 'y', by: 'admin' } },
      { type: 'DeleteUser', data: { by: 'admin' } },
    ] as UserCommand[]) {
      expect(() => decideUser(command, deleted)).toThrow(refused('conflict', 'user_deleted'));
    }
  });

  it('a password change ends every session but the one kept; a group change names the group left', () => {
    const state = run(register, start('s1'), start('s2'), start('s3'));
    expect(decideUser({ type: 'ChangePassword', data: { passwordHash: 'new', by: 'u1', keepSession: 's2' } }, state)).toEqual([
      { type: 'UserPasswordChanged', data: { passwordHash: 'new', by: 'u1' } },
      { type: 'UserSessionEnded', data: { sessionHash: 's1' } },
      { type: 'UserSessionEnded', data: { sessionHash: 's3' } },
    ]);
    expect(run(register, { type: 'ChangePassword', data: { passwordHash: 'new', by: 'admin' } }).profile?.passwordHash).toBe('new');
    const vip: UserCommand = { type: 'ChangeGroup', data: { group: 'vip', by: 'admin' } };
    expect(decideUser(vip, state)).toEqual([{ type: 'UserGroupChanged', data: { group: 'vip', previous: 'default', by: 'admin' } }]);
    expect(decideUser(vip, run(register, vip))).toEqual([]);
    expect(run(register, vip).profile?.group).toBe('vip');
  });

  it('refuses a session for a user that is not registered', () => {
    expect(() => decideUser(start(), initialUserState())).toThrow(refused('internal', 'unknown_user'));
  });

  it('its own fold gives what evolving one event at a time gives', () => {
    const events: DomainEvent[] = [{ type: 'UserRegistered', data: registration }];
    for (let i = 0; i < 50; i++) events.push({ type: 'UserSessionStarted', data: { sessionHash: `s${i}`, expiresAt: i } });
    for (let i = 0; i < 50; i += 2) events.push({ type: 'UserSessionEnded', data: { sessionHash: `s${i}` } });
    const stepwise = events.reduce(evolveUser, initialUserState());
    expect(foldUser(events)).toEqual(stepwise);
    expect(fold(userDecider, events)).toEqual(stepwise);
    expect(stepwise.openSessions.size).toBe(25);
  });
});

describe('username decider', () => {
  const claim = (userId: string) => ({ type: 'ClaimUsername' as const, data: { userId, username: 'Alice' } });

  it('a free name is claimed; the same user again decides []; another user is refused', () => {
    expect(decideUsername(claim('u1'), initialUsernameState())).toEqual([{ type: 'UsernameClaimed', data: { userId: 'u1', username: 'Alice' } }]);
    const claimed = decideUsername(claim('u1'), initialUsernameState()).reduce(evolveUsername, initialUsernameState());
    expect(decideUsername(claim('u1'), claimed)).toEqual([]);
    expect(() => decideUsername(claim('u2'), claimed)).toThrow(refused('conflict', 'username_taken', 'username'));
    expect(() => decideUsername(claim('u2'), claimed)).toThrow('username: Alice is already taken');
  });
});
