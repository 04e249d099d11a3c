/**
 * Settler: a succeeded task settles its reservation on what was actually returned (images
 * returned, seconds and resolution delivered) priced from the basis recorded at submit, never
 * on more units than were asked for (`settlementOf`); a failed task releases it. Idempotent
 * per reservation id, so replays charge nothing.
 */
import type { AccountCommand } from '../../domain/account.js';
import { isRefusal } from '../../domain/refusal.js';
import { settlementOf } from '../../domain/pricing.js';
import type { RecordedDomainEvent } from '../../domain/recorded.js';
import type { EventStore } from '../../ports/event-store.js';
import type { AccountService } from '../accounts/account-service.js';
import { readTask } from '../commands/task-commands.js';
import { taskIdOfStream } from '../../domain/events.js';

/** Resolves true when this call closed the reservation (false: closed before, or nothing to close). */
export async function settleTask(deps: { events: EventStore; accounts: AccountService }, event: RecordedDomainEvent): Promise<boolean> {
  if (event.type !== 'TaskSucceeded' && event.type !== 'TaskFailed') return false;
  const taskId = taskIdOfStream(event.streamName);
  const { state } = await readTask(deps.events, taskId);
  if (state.status === 'none') return false;
  const metadata = { at: event.metadata.at, accountId: state.accountId, correlationId: taskId, causationId: event.id };
  try {
    const command: AccountCommand =
      event.type === 'TaskSucceeded'
        ? { type: 'SettleQuota', data: { reservationId: state.reservationId, ...settlementOf(state.basis, event.data.usage) } }
        : { type: 'ReleaseQuota', data: { reservationId: state.reservationId, reason: event.data.code } };
    return (await deps.accounts.execute(state.accountId, command, metadata)).events.length > 0;
  } catch (err) {
    // A reservation the reconciler already released cannot be settled: nothing is owed twice.
    if (isRefusal(err, 'unknown_reservation')) return false;
    throw err;
  }
}
