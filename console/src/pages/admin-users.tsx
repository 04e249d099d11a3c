/**
 * Administration: the users (`/api/user/`) with their status and account figures, creating one,
 * and each user opened to manage (components/admin-user-panel.tsx): disable, enable, delete,
 * reset the password, change the group, credit, debit, and revoke their keys. Rows follow the
 * live event stream (an administrator's sees what happens to users and every account).
 */
import { useEffect, useState } from 'preact/hooks';
import { api, get } from '../api';
import { AdminUserPanel, type OnChanged } from '../components/admin-user-panel';
import { Badge, Card, Empty, ErrorLine, Pager, useSubmit, type Tone } from '../components/ui';
import { quota } from '../format';
import { useDebounced, useLiveEvents } from '../live';
import { useLoad } from '../load';
import type { AdminUser, Page, Self, UserStatus } from '../types';

const PAGE_SIZE = 50;

const STATUS_TONES: Readonly<Record<UserStatus, Tone>> = { enabled: 'good', disabled: 'bad', deleted: 'muted' };

function NewUserForm(props: { onCreated: () => void }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [group, setGroup] = useState('default');
  const [role, setRole] = useState<'user' | 'admin'>('user');
  const form = useSubmit(async () => {
    await api('POST', '/api/user/', { username, password, group, role });
    setUsername('');
    setPassword('');
    props.onCreated();
  });
  return (
    <form class="inline-form" onSubmit={form.onSubmit} data-testid="new-user-form">
      <label>
        Username
        <input required minLength={3} maxLength={32} value={username} onInput={(e) => setUsername(e.currentTarget.value)} />
      </label>
      <label>
        Password
        <input
          required
          type="password"
          autocomplete="new-password"
          minLength={8}
          maxLength={128}
          value={password}
          onInput={(e) => setPassword(e.currentTarget.value)}
        />
      </label>
      <label>
        Group
        <input required value={group} onInput={(e) => setGroup(e.currentTarget.value)} />
      </label>
      <label>
        Role
        <select value={role} onChange={(e) => setRole(e.currentTarget.value === 'admin' ? 'admin' : 'user')}>
          <option value="user">user</option>
          <option value="admin">admin</option>
        </select>
      </label>
      <button type="submit" class="primary" disabled={form.busy}>
        Create user
      </button>
      <ErrorLine error={form.error} />
    </form>
  );
}

const COLUMNS = 8;

/**
 * A user's row and, opened, the panel to manage them. An action's answer (or a fresh read)
 * replaces the row; so does what the live stream says happened to the user or their account
 * (another administrator's change, a task's charge).
 */
function UserRow(props: { user: AdminUser; self: Self; open: boolean; toggle: () => void }) {
  const [user, setUser] = useState(props.user);
  useEffect(() => setUser(props.user), [props.user]);
  const read = async () => setUser(await get<AdminUser>(`/api/user/${encodeURIComponent(user.id)}`));
  const onChanged: OnChanged = async (row) => (row ? setUser(row) : read());
  const readSoon = useDebounced(() => void read().catch(() => undefined), 300);
  useLiveEvents((event) => {
    if ((event.key === user.id && event.type.startsWith('User')) || (event.accountId === user.account_id && event.type.startsWith('Quota'))) readSoon();
  });
  const { status } = user;
  return (
    <>
      <tr class={`user-row ${props.open ? 'open' : ''}`} data-user-id={user.id} data-status={status}>
        <td data-label="User">
          <span class="who">
            <strong>{user.username}</strong> <span class="muted">{user.role}</span>
            {user.id === props.self.id && <span class="muted"> (you)</span>}
            <br />
            <code class="muted">{user.id}</code>
          </span>
        </td>
        <td data-label="Status">
          <span class="status-cell">
            <Badge value={status} tone={STATUS_TONES[status]} testId="user-status" />
            {status === 'disabled' && user.disabled_reason && (
              <span class="muted" data-testid="user-disabled-reason">
                {user.disabled_reason}
              </span>
            )}
          </span>
        </td>
        <td data-label="Group" data-testid="user-group">
          {user.group}
        </td>
        <td data-label="Balance" class="num" data-testid="user-balance">
          {quota(user.balance)}
        </td>
        <td data-label="Available" class="num" data-testid="user-available">
          {quota(user.quota)}
        </td>
        <td data-label="Used" class="num" data-testid="user-used">
          {quota(user.used_quota)}
        </td>
        <td data-label="Reserved" class="num" data-testid="user-reserved">
          {quota(user.reserved_quota)}
        </td>
        <td class="row-actions">
          <button type="button" class={props.open ? 'primary' : ''} aria-expanded={props.open} onClick={props.toggle} data-testid="manage-user">
            {props.open ? 'Close' : 'Manage'}
          </button>
        </td>
      </tr>
      {props.open && (
        <tr class="detail-row" data-detail-of={user.id}>
          <td colSpan={COLUMNS}>
            <AdminUserPanel user={user} onChanged={onChanged} />
          </td>
        </tr>
      )}
    </>
  );
}

export function AdminUsersPage(props: { self: Self }) {
  const [page, setPage] = useState(0);
  const [open, setOpen] = useState<string | undefined>(undefined);
  const users = useLoad(() => get<Page<AdminUser>>(`/api/user/?size=${PAGE_SIZE}&p=${page}`), [page]);
  const pages = Math.max(1, Math.ceil((users.value?.total ?? 0) / PAGE_SIZE));
  // A user registered elsewhere (another administrator) joins the list.
  const reloadSoon = useDebounced(users.reload, 300);
  useLiveEvents((event) => {
    if (event.type === 'UserRegistered') reloadSoon();
  });
  return (
    <>
      <Card title="New user">
        <NewUserForm onCreated={users.reload} />
      </Card>
      <Card
        title="Users"
        actions={
          <>
            <span class="muted">{users.value?.total ?? 0} in all</span>
            <button onClick={users.reload}>Refresh</button>
          </>
        }
      >
        <ErrorLine error={users.error} />
        {users.value && users.value.items.length === 0 && <Empty>No users.</Empty>}
        {users.value && users.value.items.length > 0 && (
          <table class="stack users" data-testid="users-table">
            <thead>
              <tr>
                <th>User</th>
                <th>Status</th>
                <th>Group</th>
                <th class="num">Balance</th>
                <th class="num">Available</th>
                <th class="num">Used</th>
                <th class="num">Reserved</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {users.value.items.map((u) => (
                <UserRow key={u.id} user={u} self={props.self} open={open === u.id} toggle={() => setOpen(open === u.id ? undefined : u.id)} />
              ))}
            </tbody>
          </table>
        )}
        <Pager page={page} pages={pages} setPage={setPage} />
      </Card>
    </>
  );
}
