/**
 * Loading an account from its stream: read backwards from the end to the last snapshot
 * (`AccountSnapshotted`, domain/account-snapshot.ts), start from the state it summarises and fold
 * the events after it. The cost is the events since the books were last closed, not the
 * account's history; a stream without a snapshot is read back to its start. A snapshot written
 * in parts (`AccountSnapshotPartWritten`) is read back to its first part and joined.
 */
import { applyAccountEvents, mutableAccountState, type MutableAccountState } from '../../domain/account.js';
import { SNAPSHOT_EVERY, stateFromSnapshot, type AccountSnapshot } from '../../domain/account-snapshot.js';
import { joinSnapshotParts, type AccountSnapshotPart } from '../../domain/account-snapshot-parts.js';
import { streams } from '../../domain/events.js';
import { toDomainEvent, type RecordedDomainEvent } from '../../domain/recorded.js';
import type { EventStore } from '../../ports/event-store.js';

export interface LoadedAccount {
  state: MutableAccountState;
  /** Revision of the stream's last event; -1 when the stream does not exist. */
  revision: number;
  /** Events after the last snapshot (every event when there is none). */
  sinceSnapshot: number;
  /** Events read to load it (the snapshot included). */
  eventsRead: number;
}

/** One backward page usually reaches the snapshot: the books close every SNAPSHOT_EVERY events unless the summary holds more entries than that (eventsBeforeClosing), and then the load reads on. */
const PAGE = SNAPSHOT_EVERY + 64;

export async function loadAccount(events: EventStore, accountId: string): Promise<LoadedAccount> {
  const stream = streams.account(accountId);
  const after: RecordedDomainEvent[] = []; // newest first
  let snapshot: AccountSnapshot | undefined;
  // The parts of the snapshot being read back (newest first), from its last part on.
  let parts: AccountSnapshotPart[] | undefined;
  let revision = -1;
  let eventsRead = 0;
  let from: number | undefined;
  read: for (;;) {
    const page = await events.readStream(stream, { direction: 'backwards', maxCount: PAGE, ...(from !== undefined ? { fromRevision: from } : {}) });
    if (revision === -1 && page.length > 0) revision = page[0]!.revision;
    for (const raw of page) {
      eventsRead++;
      const event = toDomainEvent(raw);
      if (!event) continue;
      if (parts) {
        // The parts of a complete snapshot are the events just before its last part.
        if (event.type !== 'AccountSnapshotPartWritten' || event.data.snapshotId !== parts[0]!.snapshotId) break read;
        parts.push(event.data);
        if (event.data.part === 0) {
          const joined = joinSnapshotParts(parts.reverse());
          if (typeof joined !== 'string') snapshot = joined;
          break read;
        }
        continue;
      }
      if (event.type === 'AccountSnapshotted') {
        snapshot = event.data;
        break read;
      }
      if (event.type === 'AccountSnapshotPartWritten') {
        // The last part starts the snapshot; any other is left from an attempt cut short.
        if (event.data.summary) parts = [event.data];
        continue;
      }
      after.push(event);
    }
    const oldest = page.at(-1);
    if (page.length < PAGE || !oldest || oldest.revision === 0) break;
    from = oldest.revision - 1;
  }
  if (parts && !snapshot) {
    // Books closed at a last part whose parts are not all there: not written by this service
    // (it appends them back to back). The fold of the whole stream is the account, whatever it holds.
    const all = await events.readStream(stream);
    const state = mutableAccountState();
    applyAccountEvents(
      state,
      all.map(toDomainEvent).filter((e) => e !== undefined),
    );
    return { state, revision: all.at(-1)?.revision ?? -1, sinceSnapshot: all.length, eventsRead: eventsRead + all.length };
  }
  const state = snapshot ? stateFromSnapshot(snapshot) : mutableAccountState();
  after.reverse();
  applyAccountEvents(state, after);
  return { state, revision, sinceSnapshot: after.length, eventsRead };
}
