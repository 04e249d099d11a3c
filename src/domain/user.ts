/**
 * The user aggregate (stream `user-<userId>`): the registration, then every login session,
 * started and ended. Starting a session already started, or ending one not open, decides `[]`,
 * so a retried login or a second logout appends nothing.
 *
 * A session that expires without a logout stays open here (deciding needs no clock); the
 * stream holds every session the user ever had, so the fold applies them in place rather than
 * copying the open set per event.
 */
import { assertNever, type Command, type Decider } from './decider.js';
import type { DomainEvent, EventDataOf, EventOf } from './events.js';
import { Refusal } from './refusal.js';

export type UserEvent = EventOf<'UserRegistered' | 'UserSessionStarted' | 'UserSessionEnded'>;

export type UserProfile = Readonly<EventDataOf<'UserRegistered'>>;

export type UserState = Readonly<{
  /** Null until registered. */
  profile: UserProfile | null;
  /** Session hash → expiry (epoch seconds), for sessions started and not ended. */
  openSessions: ReadonlyMap<string, number>;
}>;

export type RegisterUser = Command<'RegisterUser', EventDataOf<'UserRegistered'>>;
export type StartSession = Command<'StartSession', EventDataOf<'UserSessionStarted'>>;
export type EndSession = Command<'EndSession', EventDataOf<'UserSessionEnded'>>;
export type UserCommand = RegisterUser | StartSession | EndSession;

export function initialUserState(): UserState {
  return { profile: null, openSessions: new Map() };
}

export function decideUser(command: UserCommand, state: UserState): UserEvent[] {
  switch (command.type) {
    case 'RegisterUser':
      // The stream is named after the user id, so a registration already there is this one.
      return state.profile ? [] : [{ type: 'UserRegistered', data: { ...command.data } }];
    case 'StartSession':
      // The caller named a user that does not exist: the login found the user first, so only a bug gets here.
      if (!state.profile) throw new Refusal('internal', 'unknown_user', `the user is not registered (${command.type})`);
      return state.openSessions.has(command.data.sessionHash) ? [] : [{ type: 'UserSessionStarted', data: { ...command.data } }];
    case 'EndSession':
      return state.openSessions.has(command.data.sessionHash) ? [{ type: 'UserSessionEnded', data: { ...command.data } }] : [];
    default:
      return assertNever(command, 'user command');
  }
}

type UserDraft = { profile: UserProfile | null; openSessions: Map<string, number> };

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
    default:
      return;
  }
}

export function evolveUser(state: UserState, event: DomainEvent): UserState {
  return foldUser([event], state);
}

export function foldUser(events: Iterable<DomainEvent>, from: UserState = initialUserState()): UserState {
  const draft: UserDraft = { profile: from.profile, openSessions: new Map(from.openSessions) };
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
