/**
 * Account load: an account stream with N settled tasks (QuotaReserved + QuotaSettled each, the
 * books closed after eventsBeforeClosing events exactly as the account service closes them), appended
 * directly in large batches; then the time a cold account service takes to load it (read back
 * to the last snapshot, fold what follows), beside a full forward replay of the same stream.
 */
import { pino } from 'pino';
import { createSqliteEventStore } from '../../src/adapters/sqlite/event-store.js';
import { applyAccountEvents, mutableAccountState } from '../../src/domain/account.js';
import { accountSnapshot, eventsBeforeClosing } from '../../src/domain/account-snapshot.js';
import type { DomainEvent, PriceBasis } from '../../src/domain/events.js';
import { newEventId } from '../../src/domain/ids.js';
import { toDomainEvent } from '../../src/domain/recorded.js';
import { loadAccount } from '../../src/engine/accounts/account-load.js';
import { createAccountService } from '../../src/engine/accounts/account-service.js';
import { toNewEvents } from '../../src/engine/commands/append.js';
import type { EventMetadata, NewEvent } from '../../src/ports/event-store.js';
import { tempDir } from '../../test/support/tmp.js';

export interface AccountLoadResult {
  settledTasks: number;
  streamEvents: number;
  snapshots: number;
  fillSeconds: number;
  /** Cold loads (a new account service each), milliseconds. */
  loadMs: number[];
  loadMedianMs: number;
  loadMaxMs: number;
  /** Events a load read (back to the last snapshot). */
  eventsRead: number;
  /** A forward replay of the whole stream, what a load cost before snapshots. */
  fullReplayMs: number;
}

const ACCOUNT = 'acc_bench_settled';
const basis: PriceBasis = { model: 'anime-diffusion-4-5-full', group: 'default', unit: 'image', unitPrice: 10_000, groupRatioPermille: 1000, units: 1 };
/** Events per append: about 700 KB, under the 1 MiB limit of one append. */
const APPEND_EVENTS = 2000;
const COLD_LOADS = 7;

export async function accountLoad(settledTasks: number): Promise<AccountLoadResult> {
  const dir = tempDir('gateway-bench-account-');
  try {
    const path = `${dir.path}/events.sqlite`;
    const t0 = Date.now();
    const { streamEvents, snapshots } = await fill(path, settledTasks);
    const fillSeconds = (Date.now() - t0) / 1000;

    const store = createSqliteEventStore({ path });
    const log = pino({ level: 'silent' });
    const loadMs: number[] = [];
    let balance = 0;
    for (let i = 0; i < COLD_LOADS; i++) {
      const service = createAccountService({ events: store, log });
      const started = performance.now();
      balance = (await service.state(ACCOUNT)).balance;
      loadMs.push(Math.round((performance.now() - started) * 10) / 10);
    }
    const { eventsRead } = await loadAccount(store, ACCOUNT);

    const replayStarted = performance.now();
    const replayed = mutableAccountState();
    for (let from = 0; ; from += 10_000) {
      const page = await store.readStream(`account-${ACCOUNT}`, { fromRevision: from, maxCount: 10_000 });
      applyAccountEvents(
        replayed,
        page.map(toDomainEvent).filter((e) => e !== undefined),
      );
      if (page.length < 10_000) break;
    }
    const fullReplayMs = Math.round(performance.now() - replayStarted);
    await store.close();
    if (replayed.balance !== balance) throw new Error(`load and replay disagree: ${balance} vs ${replayed.balance}`);

    const sorted = [...loadMs].sort((a, b) => a - b);
    return {
      settledTasks,
      streamEvents,
      snapshots,
      fillSeconds,
      loadMs,
      loadMedianMs: sorted[Math.floor(sorted.length / 2)]!,
      loadMaxMs: sorted.at(-1)!,
      eventsRead,
      fullReplayMs,
    };
  } finally {
    dir.remove();
  }
}

async function fill(path: string, settledTasks: number): Promise<{ streamEvents: number; snapshots: number }> {
  const store = createSqliteEventStore({ path });
  const meta: EventMetadata = { at: new Date().toISOString(), accountId: ACCOUNT };
  const state = mutableAccountState();
  const opening: DomainEvent[] = [
    { type: 'AccountOpened', data: { accountId: ACCOUNT, userId: 'u_bench', group: 'default' } },
    { type: 'QuotaCredited', data: { creditId: 'c_bench', amount: 10_000 * settledTasks + 1, note: 'bench' } },
  ];
  applyAccountEvents(state, opening);
  let revision = (await store.append(`account-${ACCOUNT}`, toNewEvents(opening, meta), { expectedRevision: 'no_stream' })).nextExpectedRevision;
  let sinceSnapshot = opening.length;
  let snapshots = 0;
  let streamEvents = opening.length;
  let batch: NewEvent[] = [];
  const flush = async () => {
    revision = (await store.append(`account-${ACCOUNT}`, batch, { expectedRevision: revision })).nextExpectedRevision;
    streamEvents += batch.length;
    batch = [];
  };
  for (let i = 0; i < settledTasks; i++) {
    const taskId = `task_bench${String(i).padStart(8, '0')}`;
    const reservationId = `res_${taskId}`;
    // Built directly (not through toNewEvents' schema check): two million events, all alike.
    const events: DomainEvent[] = [
      { type: 'QuotaReserved', data: { reservationId, taskId, amount: 10_000, model: basis.model, tokenId: 'tok_bench', basis } },
      { type: 'QuotaSettled', data: { reservationId, taskId, reserved: 10_000, actual: 10_000, charged: 10_000, basis, tokenId: 'tok_bench' } },
    ];
    applyAccountEvents(state, events);
    for (const e of events) batch.push({ id: newEventId(), type: e.type, data: e.data, metadata: meta });
    sinceSnapshot += events.length;
    if (sinceSnapshot >= eventsBeforeClosing(state)) {
      // What the account service appends at the end of the append that crosses the mark.
      const snapshot: DomainEvent = { type: 'AccountSnapshotted', data: accountSnapshot(state)! };
      batch.push(...toNewEvents([snapshot], { ...meta, correlationId: 'books-closed' }));
      applyAccountEvents(state, [snapshot]);
      sinceSnapshot = 0;
      snapshots++;
    }
    if (batch.length >= APPEND_EVENTS) await flush();
  }
  if (batch.length > 0) await flush();
  await store.close();
  return { streamEvents, snapshots };
}
