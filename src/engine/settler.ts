/**
 * Settler: a succeeded task settles its reservation on what was actually returned (images
 * returned, seconds and resolution delivered) priced from the basis recorded at submit, never
 * on more units than were asked for (`settlementOf`); a failed task releases it. Idempotent
 * per reservation id, so replays charge nothing.
 */
import { UnknownReservationError } from '../domain/account.js';
import { settlementOf } from '../domain/pricing.js';
import type { RecordedDomainEvent } from '../domain/recorded.js';
import type { EventStore } from '../ports/event-store.js';
import type { AccountService } from './account-service.js';
import { readTask } from './task-commands.js';

export async function settleTask(deps: { events: EventStore; accounts: AccountService }, event: RecordedDomainEvent): Promise<void> {
  if (event.type !== 'TaskSucceeded' && event.type !== 'TaskFailed') return;
  const taskId = event.streamName.slice('task-'.length);
  const { state } = await readTask(deps.events, taskId);
  if (state.status === 'none') return;
  const metadata = { at: event.metadata.at, accountId: state.accountId, correlationId: taskId, causationId: event.id };
  try {
    if (event.type === 'TaskSucceeded') {
      const settlement = settlementOf(state.basis, event.data.usage);
      await deps.accounts.execute(state.accountId, { type: 'SettleQuota', data: { reservationId: state.reservationId, ...settlement } }, metadata);
    } else {
      await deps.accounts.execute(state.accountId, { type: 'ReleaseQuota', data: { reservationId: state.reservationId, reason: event.data.code } }, metadata);
    }
  } catch (err) {
    // A reservation the reconciler already released cannot be settled: nothing is owed twice.
    if (err instanceof UnknownReservationError) return;
    throw err;
  }
}
