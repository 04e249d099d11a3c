/**
 * The invariants of a simulation, checked on every committed event as it lands (an
 * independent model of the books, not the domain's own fold) and on the world as a whole
 * after every step:
 *
 * - every account: balance = credits − charges − debits and reserved = its open reservations,
 *   checked at each AccountSnapshotted and, at the end, against the account service's load; a
 *   debit applies once (by its id) and never takes what open reservations hold;
 * - no reservation opened twice or closed twice; no charge above what the request reserved;
 * - a task has at most one outcome, its reservation closes the way the task ended (settled
 *   when it succeeded, released when it failed) and nothing stays reserved at the end;
 * - every acknowledged task is final by its deadline (plus the stated slack);
 * - a vendor runs at most one job per task, except in the named windows (a submit whose answer
 *   never reached a live process); every such job is counted by its window's name;
 * - a callback body shows the task as the final event that scheduled it left it.
 */
import { SNAPSHOT_EVERY } from '../src/domain/account-snapshot.js';
import { toDomainEvent } from '../src/domain/recorded.js';
import type { RecordedEvent } from '../src/ports/event-store.js';
import { taskIdOfStream } from '../src/domain/events.js';

export class InvariantViolation extends Error {
  constructor(
    readonly invariant: string,
    readonly detail: string,
    /** The task (or account) whose trace explains it. */
    readonly subject: string,
  ) {
    super(`${invariant}: ${detail}`);
    this.name = 'InvariantViolation';
  }
}

/**
 * The most account events between two closings of the books: the account service closes them
 * after SNAPSHOT_EVERY events, or after as many as the summary holds entries when that is more
 * (eventsBeforeClosing); a batch may run past the mark, and a closing that failed (a store fault)
 * is made at the next append. `entries`: the most the summary held since the last closing, as the
 * model counts them (every token that reserved counts, so the bound errs high, never low).
 */
export const maxEventsBetweenClosings = (entries: number): number => 3 * Math.max(SNAPSHOT_EVERY, entries);

/** The entries the account's summary holds, as the model counts them. */
const entriesOf = (a: AccountModel): number => a.open.size + a.tokens.size + a.creditIds.size + a.debitIds.size;

interface AccountModel {
  /** Account events since its books were last closed (a snapshot, or the last of its parts). */
  sinceClosing: number;
  /** The most entries its summary would have held since then (open reservations, tokens, credit and debit ids). */
  mostEntriesSinceClosing: number;
  creditIds: Set<string>;
  tokens: Set<string>;
  credits: number;
  charged: number;
  debited: number;
  debitIds: Set<string>;
  open: Map<string, { amount: number; taskId: string }>;
  closed: Set<string>;
}

export interface TaskModel {
  taskId: string;
  accountId: string;
  reservationId: string;
  createdAt: number;
  outcome: 'succeeded' | 'failed' | null;
  reservation: 'open' | 'settled' | 'released' | 'none';
  upstreamSubmitted: number;
  /** The epoch of the submit claim open now (UpstreamSubmitClaimed), undefined when none is. */
  openClaim: number | undefined;
}

export class Books {
  readonly accounts = new Map<string, AccountModel>();
  readonly tasks = new Map<string, TaskModel>();
  /** Reservations by id, for the task-side checks. */
  private readonly reservations = new Map<string, { taskId: string; state: 'open' | 'settled' | 'released' }>();
  checks = 0;
  eventsSeen = 0;
  /** Reservations open now, across accounts. */
  openReservations = 0;
  /** Tasks whose reservation is not closed yet (open, or not seen). */
  tasksUnclosed = 0;
  /** The most reservations one account has held open at once. */
  mostOpen = 0;
  /** Administrators' debits applied. */
  debits = 0;

  private account(id: string): AccountModel {
    let a = this.accounts.get(id);
    if (!a) {
      a = {
        sinceClosing: 0,
        mostEntriesSinceClosing: 0,
        creditIds: new Set(),
        tokens: new Set(),
        credits: 0,
        charged: 0,
        debited: 0,
        debitIds: new Set(),
        open: new Map(),
        closed: new Set(),
      };
      this.accounts.set(id, a);
    }
    return a;
  }

  /** One committed event, in commit order. Throws InvariantViolation. */
  observe(raw: RecordedEvent): void {
    this.eventsSeen++;
    const e = toDomainEvent(raw);
    if (!e) return;
    this.checks++;
    const stream = raw.streamName;
    if (stream.startsWith('account-')) this.onAccount(stream.slice('account-'.length), e);
    else if (stream.startsWith('task-')) this.onTask(taskIdOfStream(stream), e);
  }

  private onAccount(accountId: string, e: NonNullable<ReturnType<typeof toDomainEvent>>): void {
    const a = this.account(accountId);
    if (++a.sinceClosing > maxEventsBetweenClosings(a.mostEntriesSinceClosing)) {
      throw new InvariantViolation(
        'books not closed',
        `${accountId}: ${a.sinceClosing} events since the last snapshot, at most ${a.mostEntriesSinceClosing} entries to summarise`,
        accountId,
      );
    }
    this.countEntries(a, e);
    switch (e.type) {
      case 'QuotaCredited':
        a.credits += e.data.amount;
        return;
      case 'QuotaDebited': {
        if (a.debitIds.has(e.data.debitId)) throw new InvariantViolation('debit applied twice', e.data.debitId, accountId);
        a.debitIds.add(e.data.debitId);
        a.debited += e.data.amount;
        this.debits++;
        const balance = a.credits - a.charged - a.debited;
        const reserved = [...a.open.values()].reduce((n, r) => n + r.amount, 0);
        if (balance < reserved) {
          throw new InvariantViolation('debit took what was reserved', `${e.data.debitId}: balance ${balance} after it, ${reserved} reserved`, accountId);
        }
        return;
      }
      case 'QuotaReserved': {
        const id = e.data.reservationId;
        if (a.open.has(id) || a.closed.has(id)) throw new InvariantViolation('reservation opened twice', id, e.data.taskId);
        a.open.set(id, { amount: e.data.amount, taskId: e.data.taskId });
        this.mostOpen = Math.max(this.mostOpen, a.open.size);
        this.openReservations++;
        this.reservations.set(id, { taskId: e.data.taskId, state: 'open' });
        return;
      }
      case 'QuotaSettled':
      case 'QuotaReleased': {
        const id = e.data.reservationId;
        const open = a.open.get(id);
        if (!open) {
          throw new InvariantViolation(
            'reservation closed twice',
            `${e.type} of ${id} (${a.closed.has(id) ? 'already closed' : 'never opened'})`,
            e.data.taskId,
          );
        }
        if (e.type === 'QuotaSettled') {
          if (e.data.charged > open.amount) {
            throw new InvariantViolation('charge above what the request asked', `${id}: charged ${e.data.charged}, reserved ${open.amount}`, e.data.taskId);
          }
          a.charged += e.data.charged;
        }
        a.open.delete(id);
        a.closed.add(id);
        this.openReservations--;
        const r = this.reservations.get(id);
        if (r) r.state = e.type === 'QuotaSettled' ? 'settled' : 'released';
        const task = this.tasks.get(e.data.taskId);
        if (task) {
          if (task.reservation === 'open' || task.reservation === 'none') this.tasksUnclosed--;
          task.reservation = e.type === 'QuotaSettled' ? 'settled' : 'released';
        }
        if (task && e.type === 'QuotaSettled' && task.outcome !== 'succeeded') {
          throw new InvariantViolation(
            'charged for a task that did not succeed',
            `${id} settled while the task is ${task.outcome ?? 'unfinished'}`,
            task.taskId,
          );
        }
        return;
      }
      case 'AccountSnapshotted':
        return this.checkClosing(accountId, a, e.data);
      case 'AccountSnapshotPartWritten':
        // The last part of a snapshot in parts carries its figures.
        if (e.data.summary) this.checkClosing(accountId, a, e.data.summary);
        return;
      default:
        return;
    }
  }

  /** What the account's summary would hold after `e` (its open reservations counted after the event's own change). */
  private countEntries(a: AccountModel, e: NonNullable<ReturnType<typeof toDomainEvent>>): void {
    if (e.type === 'QuotaCredited') a.creditIds.add(e.data.creditId);
    if (e.type === 'QuotaReserved' && e.data.tokenId !== undefined) a.tokens.add(e.data.tokenId);
    // Counted before the switch below applies `e`: a reservation it opens, or a debit id it adds, counts already.
    const adds = e.type === 'QuotaReserved' || e.type === 'QuotaDebited' ? 1 : 0;
    a.mostEntriesSinceClosing = Math.max(a.mostEntriesSinceClosing, entriesOf(a) + adds);
  }

  /** The books closed (a snapshot, or the last part of one) must say what the model says. */
  private checkClosing(accountId: string, a: AccountModel, figures: { balance: number; reserved: number }): void {
    a.sinceClosing = 0;
    a.mostEntriesSinceClosing = entriesOf(a);
    const balance = a.credits - a.charged - a.debited;
    const reserved = [...a.open.values()].reduce((n, r) => n + r.amount, 0);
    if (figures.balance !== balance || figures.reserved !== reserved) {
      throw new InvariantViolation(
        'books closed on a wrong balance',
        `${accountId}: snapshot balance ${figures.balance} reserved ${figures.reserved}; credits − charges − debits = ${balance}, open reservations = ${reserved}`,
        accountId,
      );
    }
  }

  private onTask(taskId: string, e: NonNullable<ReturnType<typeof toDomainEvent>>): void {
    const t = this.tasks.get(taskId);
    switch (e.type) {
      case 'TaskSubmitted': {
        const r = this.reservations.get(e.data.reservationId);
        if (!r || r.state === 'open') this.tasksUnclosed++;
        this.tasks.set(taskId, {
          taskId,
          accountId: e.data.accountId,
          reservationId: e.data.reservationId,
          createdAt: e.data.createdAt,
          outcome: null,
          reservation: r ? r.state : 'none',
          upstreamSubmitted: 0,
          openClaim: undefined,
        });
        return;
      }
      case 'UpstreamSubmitClaimed':
        if (t) t.openClaim = e.data.epoch;
        return;
      case 'UpstreamSubmitted':
      case 'UpstreamSubmitFailed':
        // The lease's fence: an outcome is made under the claim open when it is recorded.
        if (t && e.data.epoch !== undefined && e.data.epoch !== t.openClaim) {
          throw new InvariantViolation(
            'outcome recorded under a claim no longer open',
            `${e.type} of epoch ${e.data.epoch}, the claim open is ${t.openClaim === undefined ? 'none' : `epoch ${t.openClaim}`}`,
            taskId,
          );
        }
        if (t) t.openClaim = undefined;
        if (e.type === 'UpstreamSubmitted' && t && ++t.upstreamSubmitted > 1)
          throw new InvariantViolation('task recorded as submitted twice', `${t.upstreamSubmitted} UpstreamSubmitted`, taskId);
        return;
      case 'TaskSucceeded':
      case 'TaskFailed': {
        if (!t) return;
        if (t.outcome) throw new InvariantViolation('task ended twice', `${e.type} after ${t.outcome}`, taskId);
        t.outcome = e.type === 'TaskSucceeded' ? 'succeeded' : 'failed';
        if (t.reservation === 'settled' && t.outcome !== 'succeeded')
          throw new InvariantViolation('charged for a task that did not succeed', 'settled before it failed', taskId);
        return;
      }
      default:
        return;
    }
  }

  /** Balance and reserved of an account as the model has them. */
  expected(accountId: string): { balance: number; reserved: number } {
    const a = this.account(accountId);
    return { balance: a.credits - a.charged - a.debited, reserved: [...a.open.values()].reduce((n, r) => n + r.amount, 0) };
  }
}
