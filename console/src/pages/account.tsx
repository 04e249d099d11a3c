/**
 * The signed-in user's own account: who they are, changing their password
 * (`POST /api/user/self/password`, which ends their other sessions) and the sessions they have
 * open (`GET /api/user/self/sessions`), this one marked.
 */
import { useState } from 'preact/hooks';
import { api, get } from '../api';
import { Badge, Card, Empty, ErrorLine, useSubmit } from '../components/ui';
import { time, unixTime } from '../format';
import { useLoad } from '../load';
import type { Self, SessionInfo } from '../types';

function ChangePasswordForm(props: { onChanged: () => void }) {
  const [oldPassword, setOldPassword] = useState('');
  const [newPassword, setNewPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [done, setDone] = useState(false);
  const form = useSubmit(async () => {
    setDone(false);
    if (newPassword !== repeat) throw new Error('The new password and its repetition differ.');
    await api('POST', '/api/user/self/password', { old_password: oldPassword, new_password: newPassword });
    setOldPassword('');
    setNewPassword('');
    setRepeat('');
    setDone(true);
    props.onChanged();
  });
  return (
    <form class="inline-form" onSubmit={form.onSubmit} data-testid="change-password-form">
      <label>
        Current password
        <input
          required
          type="password"
          autocomplete="current-password"
          maxLength={128}
          value={oldPassword}
          onInput={(e) => setOldPassword(e.currentTarget.value)}
          data-testid="old-password"
        />
      </label>
      <label>
        New password
        <input
          required
          type="password"
          autocomplete="new-password"
          minLength={8}
          maxLength={128}
          value={newPassword}
          onInput={(e) => setNewPassword(e.currentTarget.value)}
          data-testid="new-password"
        />
      </label>
      <label>
        New password again
        <input
          required
          type="password"
          autocomplete="new-password"
          minLength={8}
          maxLength={128}
          value={repeat}
          onInput={(e) => setRepeat(e.currentTarget.value)}
          data-testid="repeat-password"
        />
      </label>
      <button type="submit" class="primary" disabled={form.busy} data-testid="change-password">
        Change password
      </button>
      {done && (
        <p class="ok" role="status" data-testid="password-changed">
          Password changed. Your other sessions have ended; this one stays signed in.
        </p>
      )}
      <ErrorLine error={form.error} />
    </form>
  );
}

function Sessions(props: { sessions: SessionInfo[] }) {
  if (props.sessions.length === 0) return <Empty>No open sessions.</Empty>;
  return (
    <table class="stack" data-testid="sessions-table">
      <thead>
        <tr>
          <th>Session</th>
          <th>Signed in</th>
          <th>Expires</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {props.sessions.map((s) => (
          <tr key={s.id} data-session-id={s.id} data-current={s.current ? 'true' : undefined}>
            <td data-label="Session">
              <code>{s.id}</code>
            </td>
            <td data-label="Signed in">{time(s.started_at)}</td>
            <td data-label="Expires">{unixTime(s.expires_at)}</td>
            <td>{s.current && <Badge value="this session" tone="good" testId="current-session" />}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function AccountPage(props: { self: Self }) {
  const { self } = props;
  const sessions = useLoad(() => get<SessionInfo[]>('/api/user/self/sessions'));
  return (
    <>
      <Card title="Account">
        <dl class="facts">
          <dt>Username</dt>
          <dd>{self.username}</dd>
          <dt>Role</dt>
          <dd>{self.role}</dd>
          <dt>Group</dt>
          <dd>{self.group}</dd>
          <dt>User</dt>
          <dd>
            <code>{self.id}</code>
          </dd>
          <dt>Account</dt>
          <dd>
            <code>{self.account_id}</code>
          </dd>
        </dl>
      </Card>
      <Card title="Change password">
        <ChangePasswordForm onChanged={sessions.reload} />
      </Card>
      <Card title="Sessions" actions={<button onClick={sessions.reload}>Refresh</button>} testId="sessions">
        <p class="hint">Where you are signed in to the console: each session lasts until it expires or you sign out there.</p>
        <ErrorLine error={sessions.error} />
        {sessions.value && <Sessions sessions={sessions.value} />}
      </Card>
    </>
  );
}
