import { Pager } from '../components/ui.js';
/** Administration: the users (`/api/user/`), creating one, and crediting quota (`/api/admin/credits`). */
import { useState } from 'preact/hooks';
import { api, get } from '../api';
import { Card, Empty, ErrorLine, useSubmit } from '../components/ui';
import { quota } from '../format';
import { useLoad } from '../load';
import type { Page, UserRecord } from '../types';

const PAGE_SIZE = 50;

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
    <form class="inline-form" onSubmit={form.onSubmit}>
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

function CreditForm(props: { user: UserRecord }) {
  const [amount, setAmount] = useState('');
  const [note, setNote] = useState('');
  const [result, setResult] = useState<string | undefined>(undefined);
  const form = useSubmit(async () => {
    const answer = await api<{ balance: number; available: number }>('POST', '/api/admin/credits', { user_id: props.user.id, amount: Number(amount), note });
    setResult(`balance ${quota(answer.balance)}, available ${quota(answer.available)}`);
    setAmount('');
    setNote('');
  });
  return (
    <form class="row-form" onSubmit={form.onSubmit}>
      <input
        type="number"
        min={1}
        step={1}
        required
        value={amount}
        onInput={(e) => setAmount(e.currentTarget.value)}
        placeholder="quota units"
        aria-label="amount"
      />
      <input maxLength={500} value={note} onInput={(e) => setNote(e.currentTarget.value)} placeholder="note" aria-label="note" />
      <button type="submit" disabled={form.busy}>
        Credit
      </button>
      {result && <span class="ok">{result}</span>}
      <ErrorLine error={form.error} />
    </form>
  );
}

export function AdminUsersPage() {
  const [page, setPage] = useState(0);
  const users = useLoad(() => get<Page<UserRecord>>(`/api/user/?size=${PAGE_SIZE}&p=${page}`), [page]);
  const pages = Math.max(1, Math.ceil((users.value?.total ?? 0) / PAGE_SIZE));
  return (
    <>
      <Card title="New user">
        <NewUserForm onCreated={users.reload} />
      </Card>
      <Card title="Users" actions={<span class="muted">{users.value?.total ?? 0} in all</span>}>
        <ErrorLine error={users.error} />
        {users.value && users.value.items.length === 0 && <Empty>No users.</Empty>}
        {users.value && users.value.items.length > 0 && (
          <table data-testid="users-table">
            <thead>
              <tr>
                <th>Username</th>
                <th>Role</th>
                <th>Group</th>
                <th>User id</th>
                <th>Account</th>
                <th>Credit quota</th>
              </tr>
            </thead>
            <tbody>
              {users.value.items.map((u) => (
                <tr key={u.id}>
                  <td>{u.username}</td>
                  <td>{u.role}</td>
                  <td>{u.group}</td>
                  <td>
                    <code>{u.id}</code>
                  </td>
                  <td>
                    <code>{u.account_id}</code>
                  </td>
                  <td>
                    <CreditForm user={u} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <Pager page={page} pages={pages} setPage={setPage} labels={['Previous', 'Next']} />
      </Card>
    </>
  );
}
