/** Signing in (`POST /api/user/login`): the gateway sets the session cookie the console runs on. */
import { useState } from 'preact/hooks';
import { api } from '../api';
import { ErrorLine, useSubmit } from '../components/ui';

export function LoginPage(props: { onSignedIn: () => void }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const form = useSubmit(async () => {
    await api('POST', '/api/user/login', { username, password });
    props.onSignedIn();
  });
  return (
    <main class="login">
      <form class="card login-card" onSubmit={form.onSubmit} data-testid="login-form">
        <h1>Gateway console</h1>
        <label>
          Username
          <input required autocomplete="username" value={username} onInput={(e) => setUsername(e.currentTarget.value)} data-testid="login-username" />
        </label>
        <label>
          Password
          <input
            required
            type="password"
            autocomplete="current-password"
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
            data-testid="login-password"
          />
        </label>
        <button type="submit" class="primary" disabled={form.busy} data-testid="login-submit">
          Sign in
        </button>
        <ErrorLine error={form.error} />
      </form>
    </main>
  );
}
