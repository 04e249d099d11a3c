/**
 * Replay: a store of N events shaped like real traffic (per task: TaskSubmitted,
 * UpstreamSubmitted, TaskProgressed, TaskSucceeded on the task stream; QuotaReserved,
 * QuotaSettled on the account stream, the books closed after eventsBeforeClosing account events (1,000 here) as the
 * account service closes them), then (1) a full rebuild of every projection into an empty view
 * store (`rebuildViews`, what `npm run projections:rebuild` runs) and (2) the audit (src/audit/audit.ts): every account event replayed, every snapshot
 * checked against the replay, the balances compared with the rebuilt views — none may differ.
 */
import { pino } from 'pino';
import { createSqliteEventStore } from '../../src/adapters/sqlite/event-store.js';
import { createSqliteViewStore } from '../../src/adapters/sqlite/view-store.js';
import { auditAccounts } from '../../src/audit/audit.js';
import { rebuildViews } from '../../src/audit/rebuild.js';
import { applyAccountEvents, mutableAccountState } from '../../src/domain/account.js';
import { accountSnapshot, eventsBeforeClosing } from '../../src/domain/account-snapshot.js';
import type { DomainEvent, PriceBasis } from '../../src/domain/events.js';
import { toNewEvents } from '../../src/engine/commands/append.js';
import { familyProjections } from '../../src/families/index.js';
import { coreProjections } from '../../projections/index.js';
import { tempDir } from '../../test/support/tmp.js';
import { pool } from '../client.js';

const basis: PriceBasis = { model: 'anime-diffusion-4-5-full', group: 'default', unit: 'image', unitPrice: 10_000, groupRatioPermille: 1000, units: 1 };
const ACCOUNTS = 100;
const EVENTS_PER_TASK = 6;

async function fill(path: string, events: number): Promise<number> {
  const store = createSqliteEventStore({ path });
  const meta = { at: new Date().toISOString() };
  const accounts = Array.from({ length: ACCOUNTS }, () => ({ state: mutableAccountState(), sinceSnapshot: 0 }));
  for (let a = 0; a < ACCOUNTS; a++) {
    const opening: DomainEvent[] = [
      { type: 'AccountOpened', data: { accountId: `a${a}`, userId: `u${a}`, group: 'default' } },
      { type: 'QuotaCredited', data: { creditId: `c${a}`, amount: 1e12, note: 'bench' } },
    ];
    applyAccountEvents(accounts[a]!.state, opening);
    accounts[a]!.sinceSnapshot = opening.length;
    await store.append(`account-a${a}`, toNewEvents(opening, meta));
  }
  const tasks = Math.ceil((events - 2 * ACCOUNTS) / EVENTS_PER_TASK);
  await pool(tasks, 256, async (i) => {
    const a = i % ACCOUNTS;
    const taskId = `task_bench${i}`;
    const reservationId = `res_${taskId}`;
    const taskEvents: DomainEvent[] = [
      {
        type: 'TaskSubmitted',
        data: {
          taskId,
          family: 'image',
          action: 'anime/generate',
          model: basis.model,
          accountId: `a${a}`,
          tokenId: 't',
          group: 'default',
          channelCandidates: ['sim-images'],
          request: { prompt: 'bench', n: 1 },
          reservationId,
          reserved: 10_000,
          basis,
          createdAt: 1,
        },
      },
      { type: 'UpstreamSubmitted', data: { channelId: 'sim-images', upstreamTaskId: `up${i}`, attempt: 1 } },
      { type: 'TaskProgressed', data: { status: 'in_progress', progress: 50 } },
      {
        type: 'TaskSucceeded',
        data: {
          results: [{ kind: 'image', assetKey: `tasks/${taskId}/0.png`, url: `http://x/assets/tasks/${taskId}/0.png` }],
          usage: { units: 1 },
          assetsExpireAt: 2,
          completedAt: 2,
        },
      },
    ];
    await store.append(`task-${taskId}`, toNewEvents(taskEvents, meta), { expectedRevision: 'no_stream' });
    // Folded and appended in the same tick, so the stream's order is the fold's order.
    const account = accounts[a]!;
    const accountEvents: DomainEvent[] = [
      { type: 'QuotaReserved', data: { reservationId, taskId, amount: 10_000, model: basis.model, basis } },
      { type: 'QuotaSettled', data: { reservationId, taskId, reserved: 10_000, actual: 10_000, charged: 10_000 } },
    ];
    applyAccountEvents(account.state, accountEvents);
    account.sinceSnapshot += accountEvents.length;
    if (account.sinceSnapshot >= eventsBeforeClosing(account.state)) {
      const snapshot: DomainEvent = { type: 'AccountSnapshotted', data: accountSnapshot(account.state)! };
      applyAccountEvents(account.state, [snapshot]);
      accountEvents.push(snapshot);
      account.sinceSnapshot = 0;
    }
    await store.append(`account-a${a}`, toNewEvents(accountEvents, meta));
  });
  const head = await store.headPosition();
  await store.close();
  return Number(head);
}

export interface ReplayResult {
  events: number;
  fillSeconds: number;
  auditSeconds: number;
  auditEventsPerSecond: number;
  /** Snapshots the audit checked against its replay. */
  auditSnapshots?: number;
  rebuildSeconds: number;
  rebuildEventsPerSecond: number;
}

export async function replay(events: number): Promise<ReplayResult> {
  const dir = tempDir('gateway-bench-replay-');
  try {
    const path = `${dir.path}/events.sqlite`;
    const t0 = Date.now();
    const total = await fill(path, events);
    const fillSeconds = (Date.now() - t0) / 1000;
    const store = createSqliteEventStore({ path });

    // (1) A full rebuild of every projection into an empty view store, as `npm run
    // projections:rebuild` does it (src/audit/rebuild.ts: folded in memory, each document written once).
    const views = createSqliteViewStore({ path: `${dir.path}/views.sqlite` });
    const t2 = Date.now();
    const rebuilt = await rebuildViews({ events: store, views, log: pino({ level: 'silent' }) }, [...coreProjections, ...familyProjections]);
    const rebuildSeconds = (Date.now() - t2) / 1000;
    if (rebuilt.events !== total) throw new Error(`the rebuild reached ${rebuilt.events} of ${total} events`);

    // (2) The audit: every account event replayed and checked against snapshots and views.
    const t1 = Date.now();
    const report = await auditAccounts(store, views);
    const auditSeconds = (Date.now() - t1) / 1000;
    const read = report.eventsRead;
    if (report.discrepancies.length > 0) throw new Error(`the audit found discrepancies: ${JSON.stringify(report.discrepancies.slice(0, 3))}`);
    if (report.accounts.some((a) => a.replayed.reserved !== 0)) throw new Error('replay left reservations open');
    await views.close();
    await store.close();
    return {
      events: total,
      fillSeconds,
      auditSeconds,
      auditEventsPerSecond: Math.round(read / auditSeconds),
      auditSnapshots: report.accounts.reduce((sum, a) => sum + a.snapshots, 0),
      rebuildSeconds,
      rebuildEventsPerSecond: Math.round(total / rebuildSeconds),
    };
  } finally {
    dir.remove();
  }
}
