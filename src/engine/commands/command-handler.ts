/**
 * The one command handler for event-sourced streams: read the stream, fold it to a state,
 * decide (pure: the events to append, `[]` when the command is already applied, or a thrown
 * Refusal, which reaches the caller unchanged), append with the expected revision. A conflict means another writer appended
 * first: read again and decide again on the stream as it now is, as often as the one conflict
 * policy allows a stream with few writers (conflict-retry.ts). A
 * decision of `[]` appends nothing, which makes retried commands harmless.
 *
 * Tasks, tokens, channels, users, usernames, prices and webhook secrets are written through
 * here; the account stream alone keeps its batching service (docs/decisions/0088-one-command-handler.md).
 */
import { fold, type Decider } from '../../domain/decider.js';
import type { DomainEvent } from '../../domain/events.js';
import { toDomainEvent } from '../../domain/recorded.js';
import type { AppendResult, EventMetadata, EventStore } from '../../ports/event-store.js';
import { conflictRetry, FEW_WRITERS } from './conflict-retry.js';
import { toNewEvents } from './append.js';
import { streamStateCache } from './stream-state-cache.js';

/** A state and the revision of the stream's last event folded into it (-1: no stream). */
export interface KnownState<State> {
  state: State;
  revision: number;
}

export interface CommandResult<State, Event extends DomainEvent> {
  /** The state after the command: what was read, with the decided events folded in. */
  state: State;
  /** Revision of the stream's last event after the command. */
  revision: number;
  events: Event[];
  /** Global position of the last appended event; undefined when nothing was appended. */
  position: bigint | undefined;
}

export interface StreamCommand<State, Cmd, Event extends DomainEvent> {
  events: EventStore;
  stream: string;
  decider: Decider<State, Cmd, Event>;
  command: Cmd;
  metadata: EventMetadata;
  /**
   * A state the caller just read or wrote, with its revision: saves the first read. When it
   * is stale the append conflicts and the command is decided again on the stream as it is.
   */
  known?: KnownState<State>;
  /**
   * Called, synchronously, each time the decision is handed to the store: with that append,
   * still pending, so the caller can queue an append that must follow it (AppendOptions.after)
   * into the same group commit. A conflict is decided again and appended again: the latest call
   * is the one that counts. Not called when the command decides nothing, or is refused.
   */
  onAppend?: (append: Promise<AppendResult>) => void;
}

/** The stream's state at its head: the cached state with what was appended since, else the whole stream folded. */
export async function readState<State, Cmd, Event extends DomainEvent>(
  events: EventStore,
  stream: string,
  decider: Decider<State, Cmd, Event>,
): Promise<KnownState<State>> {
  const cache = streamStateCache(events, decider as unknown as Decider<never, never, never>);
  const cached = cache.get(stream) as KnownState<State> | undefined;
  if (cached) {
    const newer = await events.readStream(stream, { fromRevision: cached.revision + 1 });
    if (newer.length === 0) return cached;
    const state = newer.map(toDomainEvent).reduce((s, event) => (event ? decider.evolve(s, event) : s), cached.state);
    return remember(cache, stream, { state, revision: newer[newer.length - 1]!.revision });
  }
  const recorded = await events.readStream(stream);
  const domain = recorded.map(toDomainEvent).filter((e) => e !== undefined);
  const known = { state: fold(decider, domain), revision: recorded.length ? recorded[recorded.length - 1]!.revision : -1 };
  return known.revision === -1 ? known : remember(cache, stream, known);
}

function remember<State>(cache: ReturnType<typeof streamStateCache>, stream: string, known: KnownState<State>): KnownState<State> {
  const kept = cache.get(stream);
  // Two reads of one stream may finish out of order: the later revision stays.
  if (!kept || kept.revision < known.revision) cache.set(stream, known);
  return known;
}

export async function executeCommand<State, Cmd, Event extends DomainEvent>(input: StreamCommand<State, Cmd, Event>): Promise<CommandResult<State, Event>> {
  const { events, stream, decider, command, metadata } = input;
  let current = input.known;
  const conflicts = conflictRetry(FEW_WRITERS);
  for (;;) {
    const { state, revision } = current ?? (await readState(events, stream, decider));
    current = undefined;
    // A refusal the decider throws (domain/refusal.ts) passes to the caller as it is.
    const decided = decider.decide(command, state);
    if (decided.length === 0) return { state, revision, events: [], position: undefined };
    try {
      const appending = events.append(stream, toNewEvents(decided, metadata), {
        expectedRevision: revision === -1 ? 'no_stream' : revision,
      });
      input.onAppend?.(appending);
      const result = await appending;
      // Not cached: the cache keeps states folded from stored events only (the next read adds these as stored).
      return { state: decided.reduce(decider.evolve, state), revision: result.nextExpectedRevision, events: decided, position: result.position };
    } catch (err) {
      if (await conflicts.again(err)) continue;
      throw err;
    }
  }
}

/** Where a command's events went, for commands that always append (or refuse). */
export function appendedPosition(result: CommandResult<unknown, DomainEvent>): bigint {
  if (result.position === undefined) throw new Error('the command was expected to append, but decided nothing');
  return result.position;
}
