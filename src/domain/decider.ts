/**
 * The decider pattern (as in Emmett): an aggregate is three pure functions.
 * `decide` turns a command and the current state into the events to append (`[]` when the
 * command is already applied), `evolve` folds one recorded event into the state, and
 * `initialState` is the state of a stream that does not exist yet.
 */
import type { DomainEvent } from './events.js';

/** A command as deciders receive it. Time and ids travel in `data`, never from a clock. */
export type Command<Type extends string, Data> = Readonly<{ type: Type; data: Readonly<Data> }>;

export type Decider<State, Cmd, Event extends DomainEvent = DomainEvent> = Readonly<{
  decide: (command: Cmd, state: State) => Event[];
  /**
   * Takes any catalog event, ignoring those of other aggregates: the command handler
   * (engine/commands/command-handler.ts) folds a stream as it reads it, without narrowing first.
   */
  evolve: (state: State, event: DomainEvent) => State;
  initialState: () => State;
  /**
   * The same as evolving each event from the initial state, for aggregates whose state is
   * costly to copy per event (a replay applies them to one draft instead).
   */
  fold?: (events: Iterable<DomainEvent>) => State;
}>;

/** Rebuilds a state from a stream's events. */
export function fold<State, Cmd, Event extends DomainEvent>(decider: Decider<State, Cmd, Event>, events: Iterable<DomainEvent>): State {
  if (decider.fold) return decider.fold(events);
  let state = decider.initialState();
  for (const event of events) state = decider.evolve(state, event);
  return state;
}

/** Compile-time proof that a switch handled every case; throws if reached at run time. */
export function assertNever(value: never, what = 'value'): never {
  throw new Error(`unhandled ${what}: ${JSON.stringify(value)}`);
}
