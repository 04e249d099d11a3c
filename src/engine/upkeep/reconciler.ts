/**
 * Releases reservations whose task stream never appeared: a submit reserves on the account
 * stream first and opens the task stream second; a crash (or a failed append) between the two
 * leaves a reservation nothing will ever settle. After a grace period it is given back.
 * It is also the settler's backstop: a task that ended but whose reservation is still open after
 * the grace period is settled here (`settleEndedTask`).
 */
import type { Logger } from 'pino';
import { streams } from '../../domain/events.js';
import type { EventStore } from '../../ports/event-store.js';
import type { ViewStore } from '../../ports/view-store.js';
import type { OpenReservationDoc } from '../../../projections/open-reservations.js';
import { dueDocuments } from './due-documents.js';
import type { AccountService } from '../accounts/account-service.js';
import { periodic, type Periodic } from './periodic.js';
import { SYNC_MAX_AGE_SECONDS } from '../tasks/deadline.js';
import { executeTask, readTask, type KnownTaskState } from '../commands/task-commands.js';
import { settleTask } from './settler.js';
import { toDomainEvent } from '../../domain/recorded.js';

export const NEVER_SUBMITTED = 'task_never_submitted';
export const INTERRUPTED = 'interrupted';

/** `runOnce` resolves with the number of reservations released. */
export type Reconciler = Periodic;

export function createReconciler(deps: {
  events: EventStore;
  views: ViewStore;
  accounts: AccountService;
  log: Logger;
  graceSeconds: number;
  clock: () => Date;
  /** The synchronous calls' deadline (TASK_MAX_AGE_SECONDS when set, else SYNC_MAX_AGE_SECONDS). */
  syncMaxAgeSeconds?: number;
  /**
   * The tasks whose reservations this instance looks after (its partitions' where instances
   * split the work, so each reservation has one reconciler); default: all.
   */
  owns?: (taskId: string) => boolean;
}): Reconciler {
  const syncCallSeconds = deps.syncMaxAgeSeconds ?? SYNC_MAX_AGE_SECONDS;
  const fail = (taskId: string, now: Date, code: string, reason: string, known: KnownTaskState & { state: { accountId: string } }) =>
    executeTask(
      deps.events,
      taskId,
      { type: 'FailTask', data: { code, reason, completedAt: Math.floor(now.getTime() / 1000) } },
      { at: now.toISOString(), accountId: known.state.accountId, correlationId: taskId },
      known,
    );

  /**
   * A synchronous call runs in its request; if that process died mid-call nothing else would
   * ever finish the task. Past the call's timeout plus the grace period it is failed, and the
   * settler releases its reservation.
   */
  async function failInterruptedSyncTask(taskId: string, now: Date, { state, revision }: KnownTaskState): Promise<boolean> {
    if (state.status === 'none' || state.final || !state.sync) return false;
    if (now.getTime() / 1000 - state.createdAt < syncCallSeconds + deps.graceSeconds) return false;
    const result = await fail(taskId, now, INTERRUPTED, 'the process serving this synchronous call stopped before it finished', { state, revision });
    if (result.events.length > 0) deps.log.warn({ taskId }, 'failed an interrupted synchronous task');
    return result.events.length > 0;
  }

  /**
   * A task that ended while its reservation stayed open past the grace period: its settlement
   * was missed (its end skipped by a checkpoint from before per-partition checkpoints, or a
   * fault). Settled as the settler would (idempotent per reservation id, so a settler that
   * merely runs late charges nothing more).
   */
  async function settleEndedTask(taskId: string): Promise<boolean> {
    const recorded = await deps.events.readStream(streams.task(taskId));
    const end = recorded.map(toDomainEvent).find((e) => e?.type === 'TaskSucceeded' || e?.type === 'TaskFailed');
    if (!end) return false;
    try {
      if (!(await settleTask(deps, end))) return false;
    } catch (err) {
      // What the settler cannot settle either (it keeps retrying) must not hold up the releases behind it.
      deps.log.error({ err, taskId }, 'settling an ended task whose reservation is still open failed');
      return false;
    }
    deps.log.warn({ taskId, type: end.type }, 'settled a task that had ended without its reservation being closed');
    return true;
  }

  async function failUnpaidTask(taskId: string, now: Date): Promise<void> {
    const { state, revision } = await readTask(deps.events, taskId);
    if (state.status === 'none' || state.final) return;
    await fail(taskId, now, NEVER_SUBMITTED, 'the task was opened after its reservation had been released', { state, revision });
    deps.log.warn({ taskId }, 'failed a task opened after its reservation was released');
  }

  return periodic('reconciler', deps.log, async function pass(): Promise<number> {
    const now = deps.clock();
    const cutoff = now.getTime() - deps.graceSeconds * 1000;
    const open = await dueDocuments<OpenReservationDoc>(
      deps.views,
      'open-reservations',
      {},
      { sortBy: 'at', limit: 1000 },
      (doc) => Date.parse(doc.at) <= cutoff,
    );
    let released = 0;
    for (const { doc } of open) {
      if (deps.owns && !deps.owns(doc.taskId)) continue;
      const task = await deps.events.readStream(streams.task(doc.taskId), { maxCount: 1 });
      if (task.length > 0) {
        const known = await readTask(deps.events, doc.taskId);
        if (known.state.status !== 'none' && known.state.final ? await settleEndedTask(doc.taskId) : await failInterruptedSyncTask(doc.taskId, now, known))
          released++;
        continue;
      }
      const result = await deps.accounts.execute(
        doc.accountId,
        { type: 'ReleaseQuota', data: { reservationId: doc.reservationId, reason: NEVER_SUBMITTED } },
        { at: now.toISOString(), accountId: doc.accountId, correlationId: doc.taskId },
      );
      if (result.events.length > 0) {
        released++;
        deps.log.warn({ reservationId: doc.reservationId, taskId: doc.taskId, amount: doc.amount }, 'released a reservation whose task never appeared');
        // The task may have been opened between the look and the release (a submit that took
        // longer than the grace, or an idempotent retry finishing it): it would run unpaid.
        await failUnpaidTask(doc.taskId, now);
      }
    }
    return released;
  });
}
