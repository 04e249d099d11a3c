/**
 * The user aggregate (stream `user-<userId>`): the registration, every login session started
 * and ended, and what administrators (or the user) changed since: disabled and enabled, deleted,
 * the password, the group.
 *
 * Starting a session already started, ending one not open, or asking for the state the user is
 * already in decides `[]`, so a retried request appends nothing. Disabling or deleting a user,
 * or changing their password, ends their open sessions (all but the one a user changed their
 * own password in); a disabled or deleted user starts no session; a deleted user changes no more (soft: the stream stays for the audit). An
 * administrator does not disable or delete their own user (nobody might be left to undo it).
 *
 * A session that expires without a logout stays open here (deciding needs no clock); the
 * stream holds every session the user ever had, so the fold applies them in place rather than
 * copying the open set per event.
 */
import { assertNever, type Command, type Decider } from './decider.js';
import type { DomainEvent, EventDataOf, EventOf } from './events.js';
import { Refusal } from './refusal.js';

export type UserEvent = EventOf<
  'UserRegistered' | 'UserSessionStarted' | 'UserSessionEnded' | 'UserDisabled' | 'UserEnabled' | 'UserDeleted' | 'UserPasswordChanged' | 'UserGroupChanged'
>;

export type UserProfile = Readonly<EventDataOf<'UserRegistered'>>;
export type UserStatus = 'enabled' | 'disabled' | 'deleted';

export type UserState = Readonly<{
  /** Null until registered; its password hash and group are the current ones. */
  profile: UserProfile | null;
  status: UserStatus;
  /** Session hash → expiry (epoch seconds), for sessions started and not ended. */
  openSessions: ReadonlyMap<string, number>;
}>;

export type RegisterUser = Command<'RegisterUser', EventDataOf<'UserRegistered'>>;
export type StartSession = Command<'StartSession', EventDataOf<'UserSessionStarted'>>;
export type EndSession = Command<'EndSession', EventDataOf<'UserSessionEnded'>>;
export type DisableUser = Command<'DisableUser', EventDataOf<'UserDisabled'>>;
export type EnableUser = Command<'EnableUser', EventDataOf<'UserEnabled'>>;
export type DeleteUser = Command<'DeleteUser', EventDataOf<'UserDeleted'>>;
/** Ends every open session but `keepSession` (the one the user changed their password in). */
export type ChangePassword = Command<'ChangePassword', EventDataOf<'UserPasswordChanged'> & { keepSession?: string }>;
export type ChangeGroup = Command<'ChangeGroup', Omit<EventDataOf<'UserGroupChanged'>, 'previous'>>;
export type UserCommand = RegisterUser | StartSession | EndSession | DisableUser | EnableUser | DeleteUser | ChangePassword | ChangeGroup;

export function initialUserState(): UserState {
  return { profile: null, status: 'enabled', openSessions: new Map() };
}

export function decideUser(command: UserCommand, state: UserState): UserEvent[] {
  if (command.type === 'RegisterUser') {
    // The stream is named after the user id, so a registration already there is this one.
    return state.profile ? [] : [{ type: 'UserRegistered', data: { ...command.data } }];
  }
  if (command.type === 'EndSession') {
    return state.openSessions.has(command.data.sessionHash) ? [{ type: 'UserSessionEnded', data: { ...command.data } }] : [];
  }
  const profile = registered(state, command.type);
  switch (command.type) {
    case 'StartSession':
      if (state.status !== 'enabled') throw new Refusal('forbidden', 'user_disabled', 'this user is disabled');
      return state.openSessions.has(command.data.sessionHash) ? [] : [{ type: 'UserSessionStarted', data: { ...command.data } }];
    case 'DisableUser':
      notSelf(profile, command.data.by, 'disable');
      return state.status === 'disabled' ? [] : [{ type: 'UserDisabled', data: { ...command.data } }, ...endSessions(state)];
    case 'EnableUser':
      return state.status === 'enabled' ? [] : [{ type: 'UserEnabled', data: { ...command.data } }];
    case 'DeleteUser':
      notSelf(profile, command.data.by, 'delete');
      return [{ type: 'UserDeleted', data: { ...command.data } }, ...endSessions(state)];
    case 'ChangePassword': {
      const { keepSession, ...data } = command.data;
      return [{ type: 'UserPasswordChanged', data }, ...endSessions(state, keepSession)];
    }
    case 'ChangeGroup':
      return profile.group === command.data.group ? [] : [{ type: 'UserGroupChanged', data: { ...command.data, previous: profile.group } }];
    default:
      return assertNever(command, 'user command');
  }
}

/** The profile of a user that exists and is not deleted (a deleted user changes no more). */
function registered(state: UserState, commandType: UserCommand['type']): UserProfile {
  // The caller found the user in the users view first, so only a bug gets here.
  if (!state.profile) throw new Refusal('internal', 'unknown_user', `the user is not registered (${commandType})`);
  if (state.status === 'deleted') throw new Refusal('conflict', 'user_deleted', 'this user was deleted; nothing changes it any more');
  return state.profile;
}

/** Every open session ends (but `keep`): a user who is shut out, or whose password changed, is signed out everywhere else. */
function endSessions(state: UserState, keep?: string): UserEvent[] {
  return [...state.openSessions.keys()].filter((hash) => hash !== keep).map((sessionHash) => ({ type: 'UserSessionEnded', data: { sessionHash } }));
}

function notSelf(profile: UserProfile, by: string, what: string): void {
  if (profile.userId === by) throw new Refusal('conflict', 'cannot_change_self', `an administrator cannot ${what} their own user`);
}

type UserDraft = { profile: UserProfile | null; status: UserStatus; openSessions: Map<string, number> };

/** Never throws on a recorded event: events that do not apply (or other streams') are ignored. */
function applyInPlace(draft: UserDraft, event: DomainEvent): void {
  switch (event.type) {
    case 'UserRegistered':
      draft.profile ??= event.data;
      return;
    case 'UserSessionStarted':
      draft.openSessions.set(event.data.sessionHash, event.data.expiresAt);
      return;
    case 'UserSessionEnded':
      draft.openSessions.delete(event.data.sessionHash);
      return;
    case 'UserDisabled':
      if (draft.status !== 'deleted') draft.status = 'disabled';
      return;
    case 'UserEnabled':
      if (draft.status !== 'deleted') draft.status = 'enabled';
      return;
    case 'UserDeleted':
      draft.status = 'deleted';
      return;
    case 'UserPasswordChanged':
      if (draft.profile) draft.profile = { ...draft.profile, passwordHash: event.data.passwordHash };
      return;
    case 'UserGroupChanged':
      if (draft.profile) draft.profile = { ...draft.profile, group: event.data.group };
      return;
    default:
      return;
  }
}

export function evolveUser(state: UserState, event: DomainEvent): UserState {
  return foldUser([event], state);
}

export function foldUser(events: Iterable<DomainEvent>, from: UserState = initialUserState()): UserState {
  const draft: UserDraft = { profile: from.profile, status: from.status, openSessions: new Map(from.openSessions) };
  for (const event of events) applyInPlace(draft, event);
  return draft;
}

/** With its own fold: a user with many logins is replayed in linear time, not quadratic. */
export const userDecider: Decider<UserState, UserCommand, UserEvent> = {
  decide: decideUser,
  evolve: evolveUser,
  initialState: initialUserState,
  fold: (events) => foldUser(events),
};
