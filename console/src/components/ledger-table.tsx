/**
 * Movements of an account's statement (`/api/billing/ledger`) as a table: the user's own on the
 * ledger page, any user's in the administrators' users page. A debit (an administrator taking
 * quota off, `QuotaDebited`) shows the reason it was given.
 */
import { quota, signed, time } from '../format';
import type { LedgerEntry } from '../types';

/** What a movement is called in the console: its event's name without `Quota` (Credited, Debited, …). */
export const movementOf = (type: string): string => type.replace(/^Quota/, '');

export function LedgerTable(props: { entries: LedgerEntry[]; testId?: string; compact?: boolean }) {
  const { compact } = props;
  return (
    <table class="stack" data-testid={props.testId}>
      <thead>
        <tr>
          <th>At</th>
          <th>Movement</th>
          {!compact && <th>Model</th>}
          {!compact && <th>Task</th>}
          <th class="num">Amount</th>
          <th class="num">Balance</th>
          {!compact && <th class="num">Reserved</th>}
          <th>Note / reason</th>
        </tr>
      </thead>
      <tbody>
        {props.entries.map((e) => (
          <tr key={e.id} data-ledger-type={e.type} data-task-id={e.task_id ?? undefined}>
            <td data-label="At">{time(e.at)}</td>
            <td data-label="Movement">{movementOf(e.type)}</td>
            {!compact && <td data-label="Model">{e.model ?? ''}</td>}
            {!compact && <td data-label="Task">{e.task_id ? <code>{e.task_id}</code> : ''}</td>}
            <td data-label="Amount" class="num">
              {quota(e.amount)}
            </td>
            <td data-label="Balance" class={`num ${e.balance_delta < 0 ? 'minus' : e.balance_delta > 0 ? 'plus' : ''}`}>
              {e.balance_delta ? signed(e.balance_delta) : ''}
            </td>
            {!compact && (
              <td data-label="Reserved" class="num">
                {e.reserved_delta ? signed(e.reserved_delta) : ''}
              </td>
            )}
            <td data-label={e.type === 'QuotaDebited' ? 'Reason' : 'Note'} class={e.type === 'QuotaDebited' ? 'reason' : 'muted'} data-testid="ledger-note">
              {e.note ?? ''}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
