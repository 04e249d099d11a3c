import { describe, expect, it } from 'vitest';
import type { AccountSnapshot } from '../../src/domain/account-snapshot.js';
import { joinSnapshotParts, splitSnapshot } from '../../src/domain/account-snapshot-parts.js';

const snapshot: AccountSnapshot = {
  accountId: 'a1',
  userId: 'u1',
  group: 'default',
  balance: 1000,
  reserved: 300,
  usedQuota: 50,
  openReservations: Array.from({ length: 300 }, (_, i) => ({
    reservationId: `r${i}`,
    amount: 1,
    taskId: `t${i}`,
    model: 'm',
    ...(i % 2 ? { tokenId: 'k' } : {}),
  })),
  tokenUsage: [{ tokenId: 'k', reserved: 150, used: 20 }],
  recentlyClosedReservationIds: Array.from({ length: 40 }, (_, i) => `closed${i}`),
  creditIds: Array.from({ length: 30 }, (_, i) => `c${i}`),
  debitIds: ['d1'],
};

describe('a snapshot in parts', () => {
  it('splits into parts no larger than asked, the figures on the last, and joins back to the snapshot exactly', () => {
    const parts = splitSnapshot(snapshot, 's1', 2000);
    expect(parts.length).toBeGreaterThan(5);
    for (const part of parts) expect(Buffer.byteLength(JSON.stringify(part))).toBeLessThanOrEqual(2000);
    expect(parts.map((p) => [p.part, p.parts, p.snapshotId])).toEqual(parts.map((_, i) => [i, parts.length, 's1']));
    expect(parts.filter((p) => p.summary).map((p) => p.part)).toEqual([parts.length - 1]);
    expect(joinSnapshotParts(parts)).toEqual(snapshot);
  });

  it('keeps parts within the limit when entries hold text JSON writes longer than its length (escapes, non-ASCII)', () => {
    const wide = {
      ...snapshot,
      openReservations: snapshot.openReservations.map((r, i) => ({ ...r, model: i % 3 ? '画像モデル "v2"' : 'm\\n' })),
      creditIds: snapshot.creditIds.map((c) => `${c}-😀`),
    };
    const parts = splitSnapshot(wide, 's1', 2000);
    for (const part of parts) expect(Buffer.byteLength(JSON.stringify(part))).toBeLessThanOrEqual(2000);
    expect(joinSnapshotParts(parts)).toEqual(wide);
  });

  it('a small snapshot still makes two parts (one part would be an AccountSnapshotted)', () => {
    const parts = splitSnapshot({ ...snapshot, openReservations: [], creditIds: [] }, 's1', 100_000);
    expect(parts).toHaveLength(2);
    expect(joinSnapshotParts(parts)).toEqual({ ...snapshot, openReservations: [], creditIds: [] });
  });

  it('does not join parts that are missing, out of order or of another snapshot', () => {
    const parts = splitSnapshot(snapshot, 's1', 2000);
    const other = splitSnapshot(snapshot, 's2', 2000);
    expect(joinSnapshotParts(parts.slice(1))).toMatch(/parts/);
    expect(joinSnapshotParts(parts.slice(0, -1))).toMatch(/last part/);
    expect(joinSnapshotParts([parts[1]!, parts[0]!, ...parts.slice(2)])).toMatch(/part 0/);
    expect(joinSnapshotParts([other[0]!, ...parts.slice(1)])).toMatch(/part 0/);
  });
});
