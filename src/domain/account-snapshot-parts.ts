/**
 * A snapshot too large for one append, written as parts (`AccountSnapshotPartWritten`,
 * events.ts): its lists cut so each part fits an append of its own, the figures and the closed
 * ids kept on the last part, where the books are closed. Joining the parts gives back the
 * snapshot exactly, so a load and the audit treat it as one `AccountSnapshotted`.
 *
 * The parts are appended back to back (each expecting the revision of the one before), so the
 * parts of a complete snapshot are the events just before its last part, nothing between them.
 */
import type { AccountSnapshot } from './account-snapshot.js';
import type { EventDataOf } from './events.js';
import { jsonBytes, jsonBytesAtLeast } from './json-bytes.js';

export type AccountSnapshotPart = EventDataOf<'AccountSnapshotPartWritten'>;

type ListName = 'openReservations' | 'tokenUsage' | 'creditIds' | 'debitIds';
const LISTS: readonly ListName[] = ['openReservations', 'tokenUsage', 'creditIds', 'debitIds'];

/**
 * The parts of `snapshot`, each one's data at most `maxPartBytes` of JSON (the caller leaves
 * room for the metadata). Always at least two: a snapshot that fits one event is written whole.
 *
 * The lists are cut by each entry's jsonBytesAtLeast, which reads lengths and makes no text, and
 * each part is then measured once, whole. Only when one is over (some entry has characters JSON
 * escapes or writes in more than a byte) are they cut again by each entry's exact JSON: at
 * 12,000 open reservations that measure took a third of a closing's time on the loop.
 */
export function splitSnapshot(snapshot: AccountSnapshot, snapshotId: string, maxPartBytes: number): AccountSnapshotPart[] {
  const parts = cutSnapshot(snapshot, snapshotId, maxPartBytes, jsonBytesAtLeast);
  if (parts.every((part) => jsonBytes(part) <= maxPartBytes)) return parts;
  return cutSnapshot(snapshot, snapshotId, maxPartBytes, jsonBytes);
}

function cutSnapshot(snapshot: AccountSnapshot, snapshotId: string, maxPartBytes: number, bytesOf: (value: unknown) => number): AccountSnapshotPart[] {
  const { openReservations: _r, tokenUsage: _u, creditIds: _c, debitIds: _d, ...summary } = snapshot;
  // The numbering fields and empty lists of a part, with room for part numbers of any size.
  const frame = jsonBytes({ ...emptyPart(snapshotId), part: Number.MAX_SAFE_INTEGER, parts: Number.MAX_SAFE_INTEGER });
  const parts: Omit<AccountSnapshotPart, 'part' | 'parts'>[] = [];
  let current = emptyPart(snapshotId);
  let size = frame;
  for (const name of LISTS) {
    for (const entry of snapshot[name]) {
      const bytes = bytesOf(entry) + 1; // and its comma
      if (size + bytes > maxPartBytes && size > frame) {
        parts.push(current);
        current = emptyPart(snapshotId);
        size = frame;
      }
      (current[name] as unknown[]).push(entry);
      size += bytes;
    }
  }
  // The summary goes on the last part; when it does not fit beside that part's entries, a part of its own.
  const summaryBytes = jsonBytes({ summary }) + 1;
  if (size + summaryBytes > maxPartBytes && size > frame) {
    parts.push(current);
    current = emptyPart(snapshotId);
  }
  parts.push({ ...current, summary });
  if (parts.length === 1) parts.unshift(emptyPart(snapshotId));
  return parts.map((p, part) => ({ ...p, part, parts: parts.length }));
}

function emptyPart(snapshotId: string): Omit<AccountSnapshotPart, 'part' | 'parts'> {
  return { snapshotId, openReservations: [], tokenUsage: [], creditIds: [], debitIds: [] };
}

/**
 * The snapshot the parts (in stream order) make up, or why they do not make one: not all of one
 * snapshot's parts, in order, ending with its summary.
 */
export function joinSnapshotParts(parts: readonly AccountSnapshotPart[]): AccountSnapshot | string {
  const last = parts.at(-1);
  if (!last?.summary) return 'the last part (with the figures) is missing';
  if (parts.length !== last.parts) return `${parts.length} of ${last.parts} parts`;
  for (const [i, p] of parts.entries()) {
    if (p.snapshotId !== last.snapshotId || p.part !== i || p.parts !== last.parts) return `part ${i} is not the snapshot's part ${i}`;
  }
  const { recentlyClosedReservationIds, ...figures } = last.summary;
  return {
    ...figures,
    openReservations: parts.flatMap((p) => p.openReservations),
    tokenUsage: parts.flatMap((p) => p.tokenUsage),
    recentlyClosedReservationIds,
    creditIds: parts.flatMap((p) => p.creditIds),
    debitIds: parts.flatMap((p) => p.debitIds),
  };
}
