/**
 * One user opened in the administrators' users page: disabling (with a reason), enabling and
 * deleting (asked again first); a new password; the group; credits and debits (with a reason);
 * the user's API keys, each revocable; and the latest movements of their account. Each action
 * shows the API's refusal beside it and hands the changed row back to the table.
 */
import { useState } from 'preact/hooks';
import { api, get } from '../api';
import { quota, unixTime } from '../format';
import { useDebounced, useLiveEvents } from '../live';
import { useLoad } from '../load';
import type { AdminUser, BalanceAnswer, LedgerEntry, Page, Token } from '../types';
import { LedgerTable } from './ledger-table';
import { ActionButton, Badge, Empty, ErrorLine, useSubmit } from './ui';

/** `row`: the API's answer, when it is the user's row; without it the row is read again. */
export type OnChanged = (row?: AdminUser) => Promise<void>;

const userPath = (user: AdminUser, tail = '') => `/api/user/${encodeURIComponent(user.id)}${tail}`;

function Done(props: { text: string | undefined }) {
  return props.text ? (
    <p class="ok" role="status">
      {props.text}
    </p>
  ) : null;
}

function DeleteUser(props: { user: AdminUser; onChanged: OnChanged }) {
  const [asking, setAsking] = useState(false);
  const form = useSubmit(async () => {
    await props.onChanged(await api<AdminUser>('DELETE', userPath(props.user)));
    setAsking(false);
  });
  if (!asking)
    return (
      <button type="button" class="danger" onClick={() => setAsking(true)} data-testid="delete-user">
        Delete…
      </button>
    );
  return (
    <form class="confirm" onSubmit={form.onSubmit} data-testid="confirm-delete-form">
      <p>
        Delete <strong>{props.user.username}</strong>? They can no longer sign in and their keys stop working; their history is kept and the name stays taken.
        This cannot be undone.
      </p>
      <div class="row-form">
        <button type="submit" class="danger" disabled={form.busy} data-testid="confirm-delete">
          Delete for good
        </button>
        <button type="button" onClick={() => setAsking(false)}>
          Cancel
        </button>
      </div>
      <ErrorLine error={form.error} />
    </form>
  );
}

function StatusSection(props: { user: AdminUser; onChanged: OnChanged }) {
  const { user } = props;
  const [reason, setReason] = useState('');
  const disable = useSubmit(async () => {
    await props.onChanged(await api<AdminUser>('POST', userPath(user, '/disable'), { reason: reason.trim() }));
    setReason('');
  });
  // The route takes no fields, but a body all the same (an empty object).
  const enable = useSubmit(async () => props.onChanged(await api<AdminUser>('POST', userPath(user, '/enable'), {})));
  if (user.status === 'deleted') return <Empty>Deleted: the user cannot be changed any more; their keys and history are listed for the record.</Empty>;
  return (
    <>
      {user.status === 'enabled' ? (
        <form class="row-form" onSubmit={disable.onSubmit} data-testid="disable-form">
          <input
            class="grow"
            maxLength={500}
            value={reason}
            onInput={(e) => setReason(e.currentTarget.value)}
            placeholder="reason (optional)"
            aria-label="reason for disabling"
            data-testid="disable-reason"
          />
          <button type="submit" disabled={disable.busy} data-testid="disable-user">
            Disable
          </button>
        </form>
      ) : (
        <form class="row-form" onSubmit={enable.onSubmit} data-testid="enable-form">
          <span class="muted">Disabled{user.disabled_reason ? `: ${user.disabled_reason}` : ''}.</span>
          <button type="submit" class="primary" disabled={enable.busy} data-testid="enable-user">
            Enable
          </button>
        </form>
      )}
      <p class="hint">Disabled, the user is signed out everywhere, cannot sign in, and their keys are refused; tasks already running finish.</p>
      <ErrorLine error={disable.error ?? enable.error} />
      <DeleteUser user={user} onChanged={props.onChanged} />
    </>
  );
}

function PasswordSection(props: { user: AdminUser; onChanged: OnChanged }) {
  const [password, setPassword] = useState('');
  const [done, setDone] = useState<string | undefined>(undefined);
  const form = useSubmit(async () => {
    setDone(undefined);
    await props.onChanged(await api<AdminUser>('POST', userPath(props.user, '/password'), { password }));
    setPassword('');
    setDone('Password reset; every session of the user has ended.');
  });
  return (
    <form class="row-form" onSubmit={form.onSubmit} data-testid="reset-password-form">
      <input
        class="grow"
        type="password"
        autocomplete="new-password"
        required
        minLength={8}
        maxLength={128}
        value={password}
        onInput={(e) => setPassword(e.currentTarget.value)}
        placeholder="new password (8 or more characters)"
        aria-label="new password"
        data-testid="reset-password"
      />
      <button type="submit" disabled={form.busy} data-testid="reset-password-submit">
        Reset password
      </button>
      <Done text={done} />
      <ErrorLine error={form.error} />
    </form>
  );
}

function GroupSection(props: { user: AdminUser; onChanged: OnChanged }) {
  const [group, setGroup] = useState(props.user.group);
  const form = useSubmit(async () => props.onChanged(await api<AdminUser>('PUT', userPath(props.user), { group: group.trim() })));
  return (
    <form class="row-form" onSubmit={form.onSubmit} data-testid="group-form">
      <input
        class="grow"
        required
        maxLength={32}
        pattern="[A-Za-z0-9_\-]{1,32}"
        title="1 to 32 letters, digits, _ or -"
        value={group}
        onInput={(e) => setGroup(e.currentTarget.value)}
        aria-label="group"
        data-testid="user-group-input"
      />
      <button type="submit" disabled={form.busy || group.trim() === props.user.group} data-testid="change-group">
        Change group
      </button>
      <p class="hint">The user's keys in the old group move with them.</p>
      <ErrorLine error={form.error} />
    </form>
  );
}

/** A credit (note optional) or a debit (reason required): quota units on or off the account. */
function QuotaForm(props: { user: AdminUser; kind: 'credit' | 'debit'; onChanged: OnChanged }) {
  const { kind } = props;
  const [amount, setAmount] = useState('');
  const [text, setText] = useState('');
  const [done, setDone] = useState<string | undefined>(undefined);
  const form = useSubmit(async () => {
    setDone(undefined);
    const body =
      kind === 'credit'
        ? { user_id: props.user.id, amount: Number(amount), note: text }
        : { user_id: props.user.id, amount: Number(amount), reason: text.trim() };
    const answer = await api<BalanceAnswer>('POST', kind === 'credit' ? '/api/admin/credits' : '/api/admin/debits', body);
    setDone(`${kind === 'credit' ? 'Credited' : 'Debited'} ${quota(Number(amount))}: balance ${quota(answer.balance)}, available ${quota(answer.available)}`);
    setAmount('');
    setText('');
    await props.onChanged();
  });
  return (
    <form class="row-form" onSubmit={form.onSubmit} data-testid={`${kind}-form`}>
      <input
        type="number"
        min={1}
        step={1}
        required
        value={amount}
        onInput={(e) => setAmount(e.currentTarget.value)}
        placeholder="quota units"
        aria-label={`${kind} amount`}
        data-testid={`${kind}-amount`}
      />
      <input
        class="grow"
        required={kind === 'debit'}
        maxLength={500}
        value={text}
        onInput={(e) => setText(e.currentTarget.value)}
        placeholder={kind === 'credit' ? 'note' : 'reason (shown in the statement)'}
        aria-label={kind === 'credit' ? 'credit note' : 'debit reason'}
        data-testid={`${kind}-${kind === 'credit' ? 'note' : 'reason'}`}
      />
      <button type="submit" class={kind === 'debit' ? 'danger' : ''} disabled={form.busy} data-testid={`${kind}-submit`}>
        {kind === 'credit' ? 'Credit' : 'Debit'}
      </button>
      <Done text={done} />
      <ErrorLine error={form.error} />
    </form>
  );
}

function KeysSection(props: { user: AdminUser }) {
  const keys = useLoad(() => get<Page<Token>>(`/api/token/?user_id=${encodeURIComponent(props.user.id)}&size=100`), [props.user.id]);
  const revoke = async (token: Token) => {
    await api('DELETE', `/api/token/${encodeURIComponent(token.id)}`);
    keys.reload();
  };
  return (
    <>
      <ErrorLine error={keys.error} />
      {keys.value && keys.value.items.length === 0 && <Empty>No keys.</Empty>}
      {keys.value && keys.value.items.length > 0 && (
        <table class="stack" data-testid="user-keys">
          <thead>
            <tr>
              <th>Name</th>
              <th>Key</th>
              <th>Status</th>
              <th>Group</th>
              <th class="num">Used</th>
              <th>Created</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {keys.value.items.map((t) => (
              <tr key={t.id} data-token-id={t.id}>
                <td data-label="Name">{t.name || <span class="muted">(no name)</span>}</td>
                <td data-label="Key">
                  <code>{t.key}</code>
                </td>
                <td data-label="Status">
                  <Badge value={t.status === 1 ? 'enabled' : 'disabled'} />
                </td>
                <td data-label="Group">{t.group}</td>
                <td data-label="Used" class="num">
                  {quota(t.used_quota)}
                </td>
                <td data-label="Created">{unixTime(t.created_time)}</td>
                <td class="row-actions">
                  <ActionButton
                    label="Revoke"
                    kind="danger"
                    confirm={`Revoke the key "${t.name || t.id}" of ${props.user.username}? Requests with it will be refused.`}
                    action={() => revoke(t)}
                    testId="revoke-key"
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

const STATEMENT_SIZE = 10;

function StatementSection(props: { user: AdminUser; version: number }) {
  const ledger = useLoad(
    () => get<Page<LedgerEntry>>(`/api/billing/ledger?account_id=${encodeURIComponent(props.user.account_id)}&size=${STATEMENT_SIZE}`),
    [props.user.account_id, props.version],
  );
  const reload = useDebounced(ledger.reload, 400);
  useLiveEvents((event) => {
    if (event.accountId === props.user.account_id && event.type.startsWith('Quota')) reload();
  });
  return (
    <>
      <ErrorLine error={ledger.error} />
      {ledger.value && ledger.value.items.length === 0 && <Empty>Nothing on this account yet.</Empty>}
      {ledger.value && ledger.value.items.length > 0 && <LedgerTable entries={ledger.value.items} testId="user-ledger" compact />}
    </>
  );
}

export function AdminUserPanel(props: { user: AdminUser; onChanged: OnChanged }) {
  const { user } = props;
  // Bumped by every change, so the statement below shows what it moved.
  const [version, setVersion] = useState(0);
  const onChanged: OnChanged = async (row) => {
    await props.onChanged(row);
    setVersion((v) => v + 1);
  };
  const live = user.status !== 'deleted';
  return (
    <div class="user-panel" data-testid="user-panel">
      <section>
        <h3>Status</h3>
        <StatusSection user={user} onChanged={onChanged} />
      </section>
      {live && (
        <section>
          <h3>Password</h3>
          <PasswordSection user={user} onChanged={onChanged} />
        </section>
      )}
      {live && (
        <section>
          <h3>Group</h3>
          <GroupSection key={user.group} user={user} onChanged={onChanged} />
        </section>
      )}
      {live && (
        <section>
          <h3>Quota</h3>
          <QuotaForm user={user} kind="credit" onChanged={onChanged} />
          <QuotaForm user={user} kind="debit" onChanged={onChanged} />
        </section>
      )}
      <section class="wide">
        <h3>API keys</h3>
        <KeysSection key={version} user={user} />
      </section>
      <section class="wide">
        <h3>Latest movements</h3>
        <StatementSection user={user} version={version} />
      </section>
    </div>
  );
}
