/**
 * Replay: a store of N events shaped like real traffic (per task: TaskSubmitted,
 * UpstreamSubmitted, TaskProgressed, TaskSucceeded on the task stream; QuotaReserved,
 * QuotaSettled on the account stream), then (1) the audit replay — every account stream folded
 * from the store — and (2) a full rebuild of every projection into an empty view store.
 */
import { pino } from 'pino';
import { createSqliteEventStore } from '../../src/adapters/sqlite/event-store.js';
import { createSqliteViewStore } from '../../src/adapters/sqlite/view-store.js';
import { foldAccount, type AccountState } from '../../src/domain/account.js';
import type { DomainEvent, PriceBasis } from '../../src/domain/events.js';
import { toDomainEvent } from '../../src/domain/recorded.js';
import { toNewEvents } from '../../src/engine/append.js';
import { familyProjections } from '../../src/families/index.js';
import { coreProjections } from '../../projections/index.js';
import { createProjectionRunner } from '../../projections/runner.js';
import { tempDir } from '../../test/support/tmp.js';
import { pool } from '../client.js';

const basis: PriceBasis = { model: 'anime-diffusion-4-5-full', group: 'default', unit: 'image', unitPrice: 10_000, groupRatioPermille: 1000, units: 1 };
const ACCOUNTS = 100;
const EVENTS_PER_TASK = 6;

async function fill(path: string, events: number): Promise<number> {
  const store = createSqliteEventStore({ path });
  const meta = { at: new Date().toISOString() };
  for (let a = 0; a < ACCOUNTS; a++) {
    await store.append(
      `account-a${a}`,
      toNewEvents(
        [
          { type: 'AccountOpened', data: { accountId: `a${a}`, userId: `u${a}`, group: 'default' } },
          { type: 'QuotaCredited', data: { creditId: `c${a}`, amount: 1e12, note: 'bench' } },
        ],
        meta,
      ),
    );
  }
  const tasks = Math.ceil((events - 2 * ACCOUNTS) / EVENTS_PER_TASK);
  const revisions = new Array<number>(ACCOUNTS).fill(1);
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
    await store.append(
      `account-a${a}`,
      toNewEvents(
        [
          { type: 'QuotaReserved', data: { reservationId, taskId, amount: 10_000, model: basis.model, basis } },
          { type: 'QuotaSettled', data: { reservationId, taskId, reserved: 10_000, actual: 10_000, charged: 10_000 } },
        ],
        meta,
      ),
    );
    revisions[a]! += 2;
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

    // (1) Audit replay: fold every account stream from the beginning.
    const t1 = Date.now();
    const accounts = new Map<string, AccountState>();
    let after = 0n;
    let read = 0;
    for (;;) {
      const page = await store.readAll({ after, maxCount: 10_000, streamPrefixes: ['account-'] });
      if (page.length === 0) break;
      const byAccount = new Map<string, DomainEvent[]>();
      for (const raw of page) {
        const e = toDomainEvent(raw);
        if (!e) continue;
        const list = byAccount.get(raw.streamName) ?? [];
        list.push(e);
        byAccount.set(raw.streamName, list);
      }
      for (const [stream, list] of byAccount) accounts.set(stream, foldAccount(list, accounts.get(stream)));
      read += page.length;
      after = page[page.length - 1]!.position;
    }
    const auditSeconds = (Date.now() - t1) / 1000;
    if ([...accounts.values()].some((a) => a.reserved !== 0)) throw new Error('replay left reservations open');

    // (2) Full projection rebuild into an empty view store.
    const views = createSqliteViewStore({ path: `${dir.path}/views.sqlite` });
    const runner = createProjectionRunner({
      events: store,
      views,
      projections: [...coreProjections, ...familyProjections],
      log: pino({ level: 'silent' }),
      batchSize: 2000,
    });
    const t2 = Date.now();
    await runner.start();
    await runner.waitFor(BigInt(total), 3_600_000);
    const rebuildSeconds = (Date.now() - t2) / 1000;
    await runner.stop();
    await views.close();
    await store.close();
    return {
      events: total,
      fillSeconds,
      auditSeconds,
      auditEventsPerSecond: Math.round(read / auditSeconds),
      rebuildSeconds,
      rebuildEventsPerSecond: Math.round(total / rebuildSeconds),
    };
  } finally {
    dir.remove();
  }
}
