/**
 * The billing audit: replays every event of every account stream from the event store with the
 * account aggregate's own fold, and compares the result with the projected account views. Each
 * closing of the books (`AccountSnapshotted`, or a snapshot written in parts, joined), which
 * loads start from, is checked against the replay of the events before it. A discrepancy names the account and each figure that differs.
 * Only the account streams are read, stream by stream: the task events are never touched.
 */
import { applyAccountEvents, mutableAccountState, type MutableAccountState } from '../domain/account.js';
import { snapshotDifferences } from '../domain/account-snapshot.js';
import { joinSnapshotParts, type AccountSnapshotPart } from '../domain/account-snapshot-parts.js';
import { toDomainEvent } from '../domain/recorded.js';
import type { EventStore } from '../ports/event-store.js';
import type { ViewStore } from '../ports/view-store.js';
import type { AccountDoc } from '../../projections/accounts.js';
import { VIEWS } from '../../projections/views.js';

export interface AccountAudit {
  accountId: string;
  events: number;
  /** Snapshots of the account checked against the replay (a disagreement is a difference). */
  snapshots: number;
  /** Movements whose decision time lies in the audited window (all of them without one). */
  credited: number;
  charged: number;
  debited: number;
  released: number;
  replayed: { balance: number; reserved: number; usedQuota: number };
  view: { balance: number; reserved: number; usedQuota: number } | null;
  differences: string[];
}

export interface AuditOptions {
  accountId?: string;
  /** ISO times bounding the movements reported (balances are always replayed from the start). */
  from?: string;
  to?: string;
  /** After each page: the events read so far, and the store's head position (what it holds, an upper bound). */
  onProgress?: (read: number, total: number) => void;
}

export interface AuditReport {
  accounts: AccountAudit[];
  eventsRead: number;
  discrepancies: AccountAudit[];
}

const inWindow = (at: string, o: AuditOptions) => (!o.from || at >= o.from) && (!o.to || at <= o.to);

export async function auditAccounts(events: EventStore, views: ViewStore, options: AuditOptions = {}): Promise<AuditReport> {
  const prefix = options.accountId ? `account-${options.accountId}` : 'account-';
  const total = Number(await events.headPosition());
  // Per account: its audit, its replayed state, and the position of its first event. The store
  // reads account after account (no order across streams); the report still lists them as a
  // read in commit order would: by that first position.
  const accounts = new Map<string, { audit: AccountAudit; state: MutableAccountState; first: bigint }>();
  // Per account, the parts of a snapshot written in parts read so far.
  const snapshotParts = new Map<string, AccountSnapshotPart[]>();
  let read = 0;
  // Each account's own events in revision order are all the fold needs: no task event is read.
  for await (const page of events.readStreamsWithPrefix(prefix, { pageSize: 5000 })) {
    for (const raw of page) {
      if (options.accountId && raw.streamName !== prefix) continue;
      const e = toDomainEvent(raw);
      if (!e) continue;
      const accountId = raw.streamName.slice('account-'.length);
      let entry = accounts.get(accountId);
      if (!entry) {
        const audit: AccountAudit = {
          accountId,
          events: 0,
          snapshots: 0,
          credited: 0,
          charged: 0,
          debited: 0,
          released: 0,
          replayed: { balance: 0, reserved: 0, usedQuota: 0 },
          view: null,
          differences: [],
        };
        entry = { audit, state: mutableAccountState(), first: raw.position };
        accounts.set(accountId, entry);
      }
      const { audit, state } = entry;
      audit.events++;
      if (inWindow(raw.metadata.at, options)) {
        if (e.type === 'QuotaCredited') audit.credited += e.data.amount;
        if (e.type === 'QuotaSettled') audit.charged += e.data.charged;
        if (e.type === 'QuotaDebited') audit.debited += e.data.amount;
        if (e.type === 'QuotaReleased') audit.released += e.data.amount;
      }
      if (e.type === 'AccountSnapshotted') {
        audit.snapshots++;
        for (const difference of snapshotDifferences(state, e.data)) audit.differences.push(`snapshot at revision ${raw.revision}: ${difference}`);
      }
      if (e.type === 'AccountSnapshotPartWritten') {
        // Parts come back to back from part 0; only the last one closes the books. Parts no last
        // part followed (an attempt cut short) say nothing and are not checked.
        const parts = e.data.part === 0 ? [] : (snapshotParts.get(accountId) ?? []);
        parts.push(e.data);
        snapshotParts.set(accountId, parts);
        if (e.data.summary) {
          audit.snapshots++;
          snapshotParts.delete(accountId);
          const joined = joinSnapshotParts(parts);
          const differences = typeof joined === 'string' ? [`parts: ${joined}`] : snapshotDifferences(state, joined);
          for (const difference of differences) audit.differences.push(`snapshot at revision ${raw.revision}: ${difference}`);
        }
      } else snapshotParts.delete(accountId);
      applyAccountEvents(state, [e]);
    }
    read += page.length;
    options.onProgress?.(read, total);
  }

  for (const [accountId, { audit, state }] of accounts) {
    audit.replayed = { balance: state.balance, reserved: state.reserved, usedQuota: state.usedQuota };
    const view = (await views.get<AccountDoc>(VIEWS.accounts, accountId))?.doc;
    audit.view = view ? { balance: view.balance, reserved: view.reserved, usedQuota: view.usedQuota } : null;
    if (!view) audit.differences.push('no projected account view');
    else {
      for (const key of ['balance', 'reserved', 'usedQuota'] as const) {
        if (view[key] !== audit.replayed[key])
          audit.differences.push(`${key}: view ${view[key]}, replay ${audit.replayed[key]} (difference ${view[key] - audit.replayed[key]})`);
      }
    }
  }
  const inOrder = [...accounts.values()].sort((x, y) => (x.first < y.first ? -1 : x.first > y.first ? 1 : 0)).map(({ audit }) => audit);
  return { accounts: inOrder, eventsRead: read, discrepancies: inOrder.filter((a) => a.differences.length > 0) };
}

export function auditCsv(report: AuditReport): string {
  const header = 'account_id,events,credited,charged,debited,released,replayed_balance,view_balance,replayed_reserved,view_reserved,differences';
  const rows = report.accounts.map((a) =>
    [
      a.accountId,
      a.events,
      a.credited,
      a.charged,
      a.debited,
      a.released,
      a.replayed.balance,
      a.view?.balance ?? '',
      a.replayed.reserved,
      a.view?.reserved ?? '',
      `"${a.differences.join('; ').replace(/"/g, '""')}"`,
    ].join(','),
  );
  return [header, ...rows].join('\n') + '\n';
}
