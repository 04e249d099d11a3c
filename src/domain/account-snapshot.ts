/**
 * Closing the books of an account (`AccountSnapshotted`, events.ts): its state summarised in
 * one event, so loading it reads the stream backwards only to its last snapshot instead of
 * folding its whole history (an account with a million settled tasks loads like a new one).
 *
 * The summary holds what decisions need: the figures, the open reservations, the token usage,
 * every credit and debit id (money in and out stays idempotent for ever) and the most recently
 * closed reservation ids. Older closed ids are forgotten, in a replay exactly as in a load
 * (account.ts folds the event that way), so both decide alike: a settle or release of a
 * forgotten reservation is refused as unknown (every caller treats that as "nothing owed"), and
 * only an Idempotency-Key retry reserving a reservation released more than
 * RETAINED_CLOSED_RESERVATIONS closings ago would be accepted anew (docs/decisions/0105-account-snapshots.md).
 *
 * However many reservations are open, the books are closed: a summary too large for one append
 * is written in parts (account-snapshot-parts.ts), closed at the last one.
 */
import type { EventDataOf } from './events.js';
import { mutableAccountState, type AccountState, type MutableAccountState } from './account.js';

export type AccountSnapshot = EventDataOf<'AccountSnapshotted'>;

/** The fewest events the account service appends before it closes the books again (eventsBeforeClosing). */
export const SNAPSHOT_EVERY = 1000;
/** Closed reservation ids a snapshot keeps (the newest). */
export const RETAINED_CLOSED_RESERVATIONS = 1000;
/**
 * How many events the account service appends before it closes the books again: SNAPSHOT_EVERY,
 * or a third of the entries the summary holds (open reservations, token usage, credit and debit
 * ids) when that is more. A closing costs time and bytes in proportion to its entries, open
 * reservations above all: at a fixed 1,000 events, a hot account's every thousandth append
 * carried them all (50–85 ms of its process's loop with 8,000–16,000 open, the submits' p99).
 * With this, a closing's cost per event since the last one stays about three entries.
 *
 * The books still close: an event adds at most two entries (a reservation, and its token's usage
 * when the token is new), so E entries at the last closing and N events since make at most
 * E + 2N, and N >= (E + 2N) / 3 once N >= E. A load reads the closing's entries and at most about
 * as many events after it (decision 0163).
 */
export function eventsBeforeClosing(state: AccountState, every = SNAPSHOT_EVERY): number {
  return Math.max(every, Math.ceil(summaryEntries(state) / 3));
}

/** The entries of the lists a summary of `state` holds (accountSnapshot), the closed ids it keeps aside (a fixed number). */
export function summaryEntries(state: AccountState): number {
  return state.openReservations.size + state.tokenUsage.size + state.seenCreditIds.size + state.seenDebitIds.size;
}

/** The account's summary; undefined when it is not open. */
export function accountSnapshot(state: AccountState, options: { retainClosed?: number } = {}): AccountSnapshot | undefined {
  if (!state.opened) return undefined;
  return {
    accountId: state.accountId,
    userId: state.userId,
    group: state.group,
    balance: state.balance,
    reserved: state.reserved,
    usedQuota: state.usedQuota,
    openReservations: [...state.openReservations].map(([reservationId, r]) => ({
      reservationId,
      amount: r.amount,
      taskId: r.taskId,
      model: r.model,
      ...(r.tokenId !== undefined ? { tokenId: r.tokenId } : {}),
    })),
    tokenUsage: [...state.tokenUsage].map(([tokenId, u]) => ({ tokenId, reserved: u.reserved, used: u.used })),
    recentlyClosedReservationIds: newest(state.closedReservationIds, options.retainClosed ?? RETAINED_CLOSED_RESERVATIONS),
    creditIds: [...state.seenCreditIds],
    debitIds: [...state.seenDebitIds],
  };
}

/**
 * Whether a stored event closes the books: an `AccountSnapshotted`, or the last part of a snapshot
 * written in parts. Loads start from the last one; the fold forgets older closed ids there.
 */
export function closesTheBooks(event: Readonly<{ type: string; data: unknown }>): boolean {
  return event.type === 'AccountSnapshotted' || (event.type === 'AccountSnapshotPartWritten' && (event.data as { summary?: unknown }).summary !== undefined);
}

/** The state a snapshot summarises: what folding the events before it (and it) gives. */
export function stateFromSnapshot(snapshot: AccountSnapshot): MutableAccountState {
  const state = mutableAccountState();
  state.opened = true;
  state.accountId = snapshot.accountId;
  state.userId = snapshot.userId;
  state.group = snapshot.group;
  state.balance = snapshot.balance;
  state.reserved = snapshot.reserved;
  state.usedQuota = snapshot.usedQuota;
  for (const { reservationId, ...reservation } of snapshot.openReservations) state.openReservations.set(reservationId, reservation);
  for (const u of snapshot.tokenUsage) state.tokenUsage.set(u.tokenId, { reserved: u.reserved, used: u.used });
  state.closedReservationIds = new Set(snapshot.recentlyClosedReservationIds);
  state.seenCreditIds = new Set(snapshot.creditIds);
  state.seenDebitIds = new Set(snapshot.debitIds);
  return state;
}

/**
 * Where a snapshot disagrees with the replay of the events before it (the auditor's check):
 * one line per differing figure, none when it is a faithful summary.
 */
export function snapshotDifferences(replayed: AccountState, snapshot: AccountSnapshot): string[] {
  // The writer chose how many closed ids to keep; they must be the newest ones the replay has.
  const expected = accountSnapshot(replayed, { retainClosed: snapshot.recentlyClosedReservationIds.length });
  if (!expected) return ['snapshot of an account that is not open'];
  const differences: string[] = [];
  for (const key of ['accountId', 'userId', 'group', 'balance', 'reserved', 'usedQuota'] as const) {
    if (snapshot[key] !== expected[key]) differences.push(`${key}: snapshot ${snapshot[key]}, replay ${expected[key]}`);
  }
  const lists = {
    openReservations: (s: AccountSnapshot) => s.openReservations.map((r) => `${r.reservationId}:${r.amount}:${r.taskId}:${r.model}:${r.tokenId ?? ''}`),
    tokenUsage: (s: AccountSnapshot) => s.tokenUsage.map((u) => `${u.tokenId}:${u.reserved}:${u.used}`),
    recentlyClosedReservationIds: (s: AccountSnapshot) => s.recentlyClosedReservationIds,
    creditIds: (s: AccountSnapshot) => s.creditIds,
    debitIds: (s: AccountSnapshot) => s.debitIds,
  };
  for (const [name, entries] of Object.entries(lists)) {
    const [got, want] = [entries(snapshot), entries(expected)];
    const [wanted, present] = [new Set(want), new Set(got)];
    const extra = got.filter((x) => !wanted.has(x));
    const missing = want.filter((x) => !present.has(x));
    if (extra.length || missing.length) differences.push(`${name}: ${missing.length} missing from the snapshot, ${extra.length} not in the replay`);
  }
  return differences;
}

/** The last `count` entries of a set in insertion order, oldest first. */
function newest(set: ReadonlySet<string>, count: number): string[] {
  if (set.size <= count) return [...set];
  const out: string[] = [];
  let skip = set.size - count;
  for (const id of set) {
    if (skip > 0) skip--;
    else out.push(id);
  }
  return out;
}
