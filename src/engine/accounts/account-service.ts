/**
 * Writes to account streams. Commands for one account are serialized in-process and those
 * that wait together are decided in order and appended as ONE batch with a concrete expected
 * revision, cut so that no append passes MAX_APPEND_BYTES. The decided state is cached; a
 * conflicting append (another writer, another instance) takes the batch's decisions back out of
 * it, reads only the events appended since and decides the batch again.
 *
 * Every SNAPSHOT_EVERY events the books are closed: the append that crosses the mark ends with
 * an `AccountSnapshotted` of the state it leaves (same append: no extra write, atomic with the
 * decisions) or, when that would not fit, is followed by it or by its parts (account-closing.ts),
 * so a load reads back only to there (account-load.ts), however many reservations are open.
 */
import type { Logger } from 'pino';
import {
  applyAccountEvents,
  applyAccountEventsUndoably,
  decideAccount,
  mutableAccountState,
  type AccountCommand,
  type AccountEvent,
  type AccountState,
  type MutableAccountState,
} from '../../domain/account.js';
import { closesTheBooks, eventsBeforeClosing, RETAINED_CLOSED_RESERVATIONS, SNAPSHOT_EVERY } from '../../domain/account-snapshot.js';
import { streams } from '../../domain/events.js';
import { toDomainEvent } from '../../domain/recorded.js';
import {
  appendSize,
  EventTooLargeError,
  MAX_APPEND_BYTES,
  PrecedingAppendFailedError,
  WrongExpectedRevisionError,
  type AppendResult,
  type EventMetadata,
  type EventStore,
  type NewEvent,
} from '../../ports/event-store.js';
import { closeTheBooks, type BooksClosing } from './account-closing.js';
import { loadAccount } from './account-load.js';
import { appendSizeAtMost, toNewEvents } from '../commands/append.js';
import { conflictRetry, MANY_WRITERS } from '../commands/conflict-retry.js';

export interface AccountResult {
  events: AccountEvent[];
  /** Position of the batch's last event, or undefined when the command decided nothing. */
  position: bigint | undefined;
}

export interface ExecuteOptions {
  /**
   * Called, synchronously, each time the command's decision is handed to the store: with that
   * append, still pending, so the caller can queue an append that must follow it
   * (AppendOptions.after) into the same group commit. A conflicting append is decided again and
   * appended again: the latest call is the one that counts. Not called when the command decides
   * nothing, or is refused.
   */
  onAppend?: (append: Promise<AppendResult>) => void;
  /**
   * An append, still pending, that the command's events must follow (AppendOptions.after): in
   * the same group commit where the store commits in groups, after it on any other, and never
   * written when it fails (the command is then refused with PrecedingAppendFailedError). A
   * synchronous call's settlement follows its task's end this way: one commit for both.
   */
  after?: Promise<AppendResult>;
}

export interface AccountService {
  execute(accountId: string, command: AccountCommand, metadata: EventMetadata, options?: ExecuteOptions): Promise<AccountResult>;
  state(accountId: string): Promise<AccountState>;
  /** Whether the reservation is open now: the account caught up, without copying its state (a hot account holds thousands). */
  hasOpenReservation(accountId: string, reservationId: string): Promise<boolean>;
}

interface Pending {
  command: AccountCommand;
  metadata: EventMetadata;
  onAppend: ExecuteOptions['onAppend'];
  /** ExecuteOptions.after, until it is known to have succeeded (followingOne). */
  after: ExecuteOptions['after'];
  resolve(result: AccountResult): void;
  reject(err: unknown): void;
}

interface Decided {
  pending: Pending;
  events: AccountEvent[];
  /** The events as the store is handed them (ids, metadata). */
  recorded: NewEvent[];
}

interface Entry {
  /** Changed in place as decisions are folded; undone when their append conflicts. */
  state: MutableAccountState;
  /** Revision of the last event folded into state; -1 when the stream does not exist. */
  revision: number;
  /** Events in the stream after its last snapshot (all of them when it has none). */
  sinceSnapshot: number;
}

/**
 * The account's stream kept changing under this command for longer than the conflict budget
 * (commands/conflict-retry.ts, `MANY_WRITERS`): several writers share one account stream (api
 * instances reserving, the worker settling), and one busy customer must wait, not fail; only past
 * the budget is the command refused, as a retryable 503, never a 500.
 */
export class AccountContendedError extends Error {
  constructor(readonly accountId: string) {
    super(`account ${accountId} is being written by others; try again`);
    this.name = 'AccountContendedError';
  }
}

export function createAccountService(deps: {
  events: EventStore;
  log: Logger;
  maxCached?: number;
  /** Tests close the books more often, and keep fewer closed ids, than production does. */
  snapshotEvery?: number;
  retainClosedReservations?: number;
}): AccountService {
  const { events, log } = deps;
  const maxCached = deps.maxCached ?? 10_000;
  const snapshotEvery = deps.snapshotEvery ?? SNAPSHOT_EVERY;
  const retainClosed = deps.retainClosedReservations ?? RETAINED_CLOSED_RESERVATIONS;
  const cache = new Map<string, Entry>();
  const queues = new Map<string, Pending[]>();
  const locks = new Map<string, Promise<void>>();

  /**
   * The account's state as the store has it now. A cached state is caught up with what other
   * writers appended since (usually nothing: one cheap read), so a decision never refuses a
   * command — "unknown reservation", "insufficient quota" — on a stale view of the account.
   */
  async function load(accountId: string): Promise<Entry> {
    const cached = cache.get(accountId);
    if (cached) {
      const newer = await events.readStream(streams.account(accountId), { fromRevision: cached.revision + 1 });
      if (newer.length > 0) {
        const domain = newer.map(toDomainEvent).filter((e) => e !== undefined);
        applyAccountEvents(cached.state, domain);
        cached.revision = newer[newer.length - 1]!.revision;
        const snapshotAt = newer.findLastIndex(closesTheBooks);
        cached.sinceSnapshot = snapshotAt === -1 ? cached.sinceSnapshot + newer.length : newer.length - 1 - snapshotAt;
      }
      return cached;
    }
    const { state, revision, sinceSnapshot } = await loadAccount(events, accountId);
    const entry = { state, revision, sinceSnapshot };
    if (cache.size >= maxCached) cache.delete(cache.keys().next().value!);
    cache.set(accountId, entry);
    return entry;
  }

  /**
   * Decides the batch in order and appends it as one. Returns the commands left for the next
   * append: a batch stops before the command whose events would take the append past
   * MAX_APPEND_BYTES, so no command is refused for what the others waiting with it weigh.
   */
  async function runBatch(accountId: string, batch: Pending[]): Promise<Pending[]> {
    const conflicts = conflictRetry(MANY_WRITERS);
    const stream = streams.account(accountId);
    batch = await followingOne(stream, batch);
    for (let attempt = 0; ; attempt++) {
      const entry = await load(accountId);
      // Decisions are folded into the cached state as they are made, so each command of the
      // batch sees the ones before it; if the append fails they are undone (below).
      const state = entry.state;
      const decided: Decided[] = [];
      const undos: (() => void)[] = [];
      /** Takes the batch's decisions back out of the cached state, last first (their append wrote nothing). */
      const undoDecisions = () => {
        for (let i = undos.length - 1; i >= 0; i--) undos[i]!();
      };
      let rest: Pending[] = [];
      /**
       * Never less than the decided events' appendSize, so the batch and a closing beside it fit:
       * a bound from lengths (appendSizeAtMost) while that is under the limit, exact from the
       * first command that would take the bound over it (the batch then fills to the limit).
       */
      let size = 0;
      let exact = false;
      for (let i = 0; i < batch.length; i++) {
        const pending = batch[i]!;
        let evs: AccountEvent[];
        let recorded: NewEvent[];
        try {
          evs = decideAccount(pending.command, state);
          recorded = toNewEvents(evs, pending.metadata);
        } catch (err) {
          pending.reject(err);
          continue;
        }
        let bytes = exact ? appendSize(recorded) : appendSizeAtMost(recorded);
        if (!exact && size + bytes > MAX_APPEND_BYTES) {
          exact = true;
          size = decided.reduce((sum, d) => sum + appendSize(d.recorded), 0);
          bytes = appendSize(recorded);
        }
        if (size + bytes > MAX_APPEND_BYTES) {
          if (size === 0) {
            // Too large on its own: its own fault, and only its own.
            pending.reject(new EventTooLargeError(stream, bytes, MAX_APPEND_BYTES));
            continue;
          }
          rest = batch.slice(i);
          break;
        }
        size += bytes;
        if (evs.length) undos.push(applyAccountEventsUndoably(state, evs));
        decided.push({ pending, events: evs, recorded });
      }
      const decidedEvents = decided.flatMap((d) => d.recorded);
      if (decidedEvents.length === 0) {
        for (const d of decided) d.pending.resolve({ events: [], position: undefined });
        return rest;
      }
      const books =
        entry.sinceSnapshot + decidedEvents.length >= eventsBeforeClosing(state, snapshotEvery)
          ? booksToClose(state, accountId, decidedEvents.at(-1)!.metadata.at, size)
          : undefined;
      // The one command of the batch that follows another append (followingOne), if it decided events.
      const follower = decided.find((d) => d.pending.after !== undefined && d.events.length > 0);
      try {
        const newEvents = books ? [...decidedEvents, ...books.inline] : decidedEvents;
        const appending = events.append(stream, newEvents, {
          expectedRevision: entry.revision === -1 ? 'no_stream' : entry.revision,
          ...(follower ? { after: follower.pending.after } : {}),
        });
        const following = books ? appendAfter(stream, books.following, appending, entry.revision + newEvents.length) : [];
        announceAppend(decided, appending, accountId);
        const result = await appending;
        entry.revision = result.nextExpectedRevision;
        entry.sinceSnapshot += newEvents.length;
        for (const d of decided) d.pending.resolve({ events: d.events, position: d.events.length ? result.position : undefined });
        if (books) await booksClosed(entry, accountId, books, following);
        return rest;
      } catch (err) {
        if (err instanceof WrongExpectedRevisionError) {
          // Another writer appended first: the cache is right but for this batch's decisions.
          // Taken back out, it catches up with only what was appended since (load), not the
          // whole stream back to the last snapshot.
          undoDecisions();
          if (await conflicts.again(err)) {
            log.debug({ accountId, attempt }, 'account append conflicted; deciding again on the current stream');
            batch = [...decided.map((d) => d.pending), ...rest];
            continue;
          }
          log.warn({ accountId, attempt }, 'account stream contended past the conflict budget');
          for (const d of decided) d.pending.reject(new AccountContendedError(accountId));
          return rest;
        }
        if (err instanceof PrecedingAppendFailedError && follower) {
          // Nothing was written: the command that was to follow is refused, the others go again.
          undoDecisions();
          follower.pending.reject(err);
          batch = [...decided.filter((d) => d !== follower).map((d) => d.pending), ...rest];
          continue;
        }
        // Whether anything was written is not known: the account is read again.
        cache.delete(accountId);
        for (const d of decided) d.pending.reject(err);
        return rest;
      }
    }
  }

  /**
   * At most one command of a batch follows another append in its commit (ExecuteOptions.after).
   * When several wait together, their preceding appends are waited for first (their group
   * commits are under way): a command whose preceding append failed is refused and decides
   * nothing, the others are decided as plain commands.
   */
  async function followingOne(stream: string, batch: Pending[]): Promise<Pending[]> {
    const following = batch.flatMap((p) => (p.after ? [{ pending: p, after: p.after }] : []));
    if (following.length <= 1) return batch;
    const outcomes = await Promise.allSettled(following.map((f) => f.after));
    const refused = new Set<Pending>();
    following.forEach(({ pending }, i) => {
      const outcome = outcomes[i]!;
      pending.after = undefined;
      if (outcome.status === 'fulfilled') return;
      refused.add(pending);
      pending.reject(new PrecedingAppendFailedError(stream, outcome.reason));
    });
    return batch.filter((p) => !refused.has(p));
  }

  /** What closes the books after these decisions; none (and a warning) if it can not be built: the decisions go on. */
  function booksToClose(state: MutableAccountState, accountId: string, at: string, decidedBytes: number): BooksClosing | undefined {
    try {
      return closeTheBooks(state, { accountId, at, retainClosed, room: MAX_APPEND_BYTES - decidedBytes });
    } catch (err) {
      log.warn({ err, accountId }, 'the books could not be closed; the next append tries again');
      return undefined;
    }
  }

  /** Hands the pending append to the commands that decided events in it (ExecuteOptions.onAppend). */
  function announceAppend(decided: readonly Decided[], appending: Promise<AppendResult>, accountId: string): void {
    for (const d of decided) {
      if (d.events.length === 0 || !d.pending.onAppend) continue;
      try {
        d.pending.onAppend(appending);
      } catch (err) {
        // The caller's follow-up is its own affair: this batch's append goes on regardless.
        log.error({ err, accountId }, 'a command failed to follow its account append');
      }
    }
  }

  /**
   * Appends that follow `first`, back to back (each expects the revision the one before leaves,
   * and is written only if it was: AppendOptions.after, one group commit on SQLite).
   */
  function appendAfter(stream: string, appends: readonly NewEvent[][], first: Promise<AppendResult>, lastRevision: number): Promise<AppendResult>[] {
    let previous = first;
    let revision = lastRevision;
    return appends.map((evs) => {
      const appending = events.append(stream, evs, { expectedRevision: revision, after: previous });
      // Awaited (booksClosed) only when the decisions were stored; otherwise it failed unwritten.
      appending.catch(() => undefined);
      previous = appending;
      revision += evs.length;
      return appending;
    });
  }

  /**
   * Once the snapshot's own appends are stored, the books are closed in the cached state too. One
   * cut short (another writer came between) leaves the books open: the next append tries again.
   */
  async function booksClosed(entry: Entry, accountId: string, books: BooksClosing, following: readonly Promise<AppendResult>[]): Promise<void> {
    for (const [i, appending] of following.entries()) {
      try {
        const result = await appending;
        entry.revision = result.nextExpectedRevision;
        entry.sinceSnapshot += books.following[i]!.length;
      } catch (err) {
        log.warn({ err, accountId }, 'closing the books was cut short; the next append tries again');
        return;
      }
    }
    applyAccountEvents(entry.state, [books.closing]);
    entry.sinceSnapshot = 0;
  }

  /**
   * One at a time per account: a batch (whose decisions sit in the cached state, undone if their
   * append conflicts) and a read of the state. A read catching up while a batch's decisions are
   * folded in would be lost by their undo, its revision kept: the cache would miss those events.
   */
  function exclusively<T>(accountId: string, work: () => Promise<T>): Promise<T> {
    const running = (locks.get(accountId) ?? Promise.resolve()).then(work);
    const done = running.then(
      () => undefined,
      () => undefined,
    );
    locks.set(accountId, done);
    void done.then(() => {
      if (locks.get(accountId) === done) locks.delete(accountId);
    });
    return running;
  }

  async function drain(accountId: string): Promise<void> {
    const queue = queues.get(accountId)!;
    while (queue.length > 0) {
      const batch = queue.splice(0, queue.length);
      try {
        // What did not fit in this append goes first in the next one, in its order.
        queue.unshift(...(await exclusively(accountId, () => runBatch(accountId, batch))));
      } catch (err) {
        for (const p of batch) p.reject(err);
      }
    }
    queues.delete(accountId);
  }

  return {
    execute(accountId, command, metadata, options) {
      return new Promise<AccountResult>((resolve, reject) => {
        const pending: Pending = { command, metadata, onAppend: options?.onAppend, after: options?.after, resolve, reject };
        const queue = queues.get(accountId);
        if (queue) {
          queue.push(pending);
          return;
        }
        queues.set(accountId, [pending]);
        void drain(accountId);
      });
    },
    state(accountId) {
      // A copy: callers must not see (or change) the live cached state.
      return exclusively(accountId, async () => mutableAccountState((await load(accountId)).state));
    },
    hasOpenReservation(accountId, reservationId) {
      return exclusively(accountId, async () => (await load(accountId)).state.openReservations.has(reservationId));
    },
  };
}
