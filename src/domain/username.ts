/**
 * A username's claim (stream `username-<lowercased name>`): a name is taken once, by one
 * user, across instances — two registrations racing for it append with the same expected
 * revision, and the one that loses decides again and is refused.
 */
import { assertNever, type Command, type Decider } from './decider.js';
import type { DomainEvent, EventDataOf, EventOf } from './events.js';
import { Refusal } from './refusal.js';

export type UsernameEvent = EventOf<'UsernameClaimed'>;

/** `claimedBy`: the user id holding the name, or null while it is free. */
export type UsernameState = Readonly<{ claimedBy: string | null }>;

export type ClaimUsername = Command<'ClaimUsername', EventDataOf<'UsernameClaimed'>>;
export type UsernameCommand = ClaimUsername;

export function initialUsernameState(): UsernameState {
  return { claimedBy: null };
}

export function decideUsername(command: UsernameCommand, state: UsernameState): UsernameEvent[] {
  switch (command.type) {
    case 'ClaimUsername':
      if (state.claimedBy === null) return [{ type: 'UsernameClaimed', data: { ...command.data } }];
      // The same user claiming again is a retry of its own claim.
      if (state.claimedBy === command.data.userId) return [];
      throw new Refusal('conflict', 'username_taken', `username: ${command.data.username} is already taken`, 'username');
    default:
      return assertNever(command.type, 'username command');
  }
}

/** The first claim holds; a later one in the stream (there is none by construction) changes nothing. */
export function evolveUsername(state: UsernameState, event: DomainEvent): UsernameState {
  return event.type === 'UsernameClaimed' && state.claimedBy === null ? { claimedBy: event.data.userId } : state;
}

export const usernameDecider: Decider<UsernameState, UsernameCommand, UsernameEvent> = {
  decide: decideUsername,
  evolve: evolveUsername,
  initialState: initialUsernameState,
};
