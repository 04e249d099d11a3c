/**
 * Writes to account streams. Commands for one account are serialized in-process and those
 * that wait together are decided in order and appended as ONE batch with a concrete expected
 * revision. The decided state is cached; a conflicting append (another writer, another
 * instance) drops the cache, re-reads the stream and decides the batch again.
 */
import type { Logger } from 'pino';
import {
  applyAccountEvents,
  decideAccount,
  mutableAccountState,
  type AccountCommand,
  type AccountEvent,
  type AccountState,
  type MutableAccountState,
} from '../domain/account.js';
import { streams } from '../domain/events.js';
import { toDomainEvent } from '../domain/recorded.js';
import { WrongExpectedRevisionError, type EventMetadata, type EventStore } from '../ports/event-store.js';
import { toNewEvents } from './append.js';

export interface AccountResult {
  events: AccountEvent[];
  /** Position of the batch's last event, or undefined when the command decided nothing. */
  position: bigint | undefined;
}

export interface AccountService {
  execute(accountId: string, command: AccountCommand, metadata: EventMetadata): Promise<AccountResult>;
  state(accountId: string): Promise<AccountState>;
}

interface Pending {
  command: AccountCommand;
  metadata: EventMetadata;
  resolve(result: AccountResult): void;
  reject(err: unknown): void;
}

interface Entry {
  /** Changed in place as decisions are folded; dropped when an append fails. */
  state: MutableAccountState;
  /** Revision of the last event folded into state; -1 when the stream does not exist. */
  revision: number;
}

const MAX_CONFLICT_RETRIES = 8;

export function createAccountService(deps: { events: EventStore; log: Logger; maxCached?: number }): AccountService {
  const { events, log } = deps;
  const maxCached = deps.maxCached ?? 10_000;
  const cache = new Map<string, Entry>();
  const queues = new Map<string, Pending[]>();

  async function load(accountId: string): Promise<Entry> {
    const cached = cache.get(accountId);
    if (cached) return cached;
    const recorded = await events.readStream(streams.account(accountId));
    const domain = recorded.map(toDomainEvent).filter((e) => e !== undefined);
    const state = mutableAccountState();
    applyAccountEvents(state, domain);
    const entry = { state, revision: recorded.length ? recorded[recorded.length - 1]!.revision : -1 };
    if (cache.size >= maxCached) cache.delete(cache.keys().next().value!);
    cache.set(accountId, entry);
    return entry;
  }

  async function runBatch(accountId: string, batch: Pending[]): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const entry = await load(accountId);
      // Decisions are folded into the cached state as they are made, so each command of the
      // batch sees the ones before it; if the append fails the cache is dropped (below).
      const state = entry.state;
      const decided: { pending: Pending; events: AccountEvent[] }[] = [];
      for (const pending of batch) {
        try {
          const evs = decideAccount(pending.command, state);
          if (evs.length) applyAccountEvents(state, evs);
          decided.push({ pending, events: evs });
        } catch (err) {
          pending.reject(err);
        }
      }
      const toAppend = decided.flatMap((d) => d.events.map((event) => ({ event, metadata: d.pending.metadata })));
      if (toAppend.length === 0) {
        for (const d of decided) d.pending.resolve({ events: [], position: undefined });
        return;
      }
      try {
        const newEvents = toAppend.flatMap((a) => toNewEvents([a.event], a.metadata));
        const result = await events.append(streams.account(accountId), newEvents, {
          expectedRevision: entry.revision === -1 ? 'no_stream' : entry.revision,
        });
        entry.revision = result.nextExpectedRevision;
        for (const d of decided) d.pending.resolve({ events: d.events, position: d.events.length ? result.position : undefined });
        return;
      } catch (err) {
        cache.delete(accountId);
        if (err instanceof WrongExpectedRevisionError && attempt < MAX_CONFLICT_RETRIES) {
          log.debug({ accountId, attempt }, 'account append conflicted; deciding again on the current stream');
          batch = decided.map((d) => d.pending);
          continue;
        }
        for (const d of decided) d.pending.reject(err);
        return;
      }
    }
  }

  async function drain(accountId: string): Promise<void> {
    const queue = queues.get(accountId)!;
    while (queue.length > 0) {
      const batch = queue.splice(0, queue.length);
      try {
        await runBatch(accountId, batch);
      } catch (err) {
        for (const p of batch) p.reject(err);
      }
    }
    queues.delete(accountId);
  }

  return {
    execute(accountId, command, metadata) {
      return new Promise<AccountResult>((resolve, reject) => {
        const pending: Pending = { command, metadata, resolve, reject };
        const queue = queues.get(accountId);
        if (queue) {
          queue.push(pending);
          return;
        }
        queues.set(accountId, [pending]);
        void drain(accountId);
      });
    },
    async state(accountId) {
      // A copy: callers must not see (or change) the live cached state.
      return mutableAccountState((await load(accountId)).state);
    },
  };
}
