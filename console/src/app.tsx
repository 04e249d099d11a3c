/**
 * The console: signed out, the login form; signed in, the account's figures (live), the pages a
 * user has, and the administration pages for administrators. One live event stream feeds every
 * page. A key created here is kept in memory only (never stored), so tasks can be submitted with it.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, get, messageOf, SESSION_ENDED } from './api';
import { Badge } from './components/ui';
import { quota } from './format';
import { LiveContext, openLiveEvents, useDebounced, type LiveEvents, type LiveState } from './live';
import { AccountPage } from './pages/account';
import { AdminChannelsPage } from './pages/admin-channels';
import { AdminMetricsPage } from './pages/admin-metrics';
import { AdminPricesPage } from './pages/admin-prices';
import { AdminTasksPage } from './pages/admin-tasks';
import { AdminUsagePage } from './pages/admin-usage';
import { AdminUsersPage } from './pages/admin-users';
import { KeysPage } from './pages/keys';
import { LedgerPage } from './pages/ledger';
import { LoginPage } from './pages/login';
import { OverviewPage } from './pages/overview';
import { PricesPage } from './pages/prices';
import { TasksPage } from './pages/tasks';
import { WebhooksPage } from './pages/webhooks';
import { hrefOf, useRoute } from './routes';
import type { Self } from './types';

const USER_PAGES: readonly [string, string][] = [
  ['', 'Overview'],
  ['tasks', 'Tasks'],
  ['keys', 'API keys'],
  ['ledger', 'Ledger'],
  ['prices', 'Prices'],
  ['webhooks', 'Webhooks'],
  ['account', 'Account'],
];
const ADMIN_PAGES: readonly [string, string][] = [
  ['admin/metrics', 'Metrics'],
  ['admin/users', 'Users'],
  ['admin/tasks', 'Task log'],
  ['admin/usage', 'Usage'],
  ['admin/channels', 'Channels'],
  ['admin/prices', 'Price table'],
];

function NavLink(props: { route: string; current: string; go: (route: string) => void; children: ComponentChildren }) {
  return (
    <a
      href={hrefOf(props.route)}
      class={props.route === props.current ? 'active' : ''}
      onClick={(e) => {
        e.preventDefault();
        props.go(props.route);
      }}
    >
      {props.children}
    </a>
  );
}

function Figures(props: { self: Self }) {
  const s = props.self;
  const figures: [string, number, string][] = [
    ['Balance', s.balance, 'balance'],
    ['Available', s.quota, 'available'],
    ['Reserved', s.reserved_quota, 'reserved'],
    ['Used', s.used_quota, 'used'],
  ];
  return (
    <div class="figures" data-testid="account-figures">
      {figures.map(([label, value, id]) => (
        <div class="figure" key={id}>
          <span class="figure-value" data-testid={`figure-${id}`}>
            {quota(value)}
          </span>
          <span class="figure-label">{label}</span>
        </div>
      ))}
    </div>
  );
}

function Page(props: { route: string; self: Self; apiKey: string | undefined; onKeyCreated: (key: string) => void; go: (route: string) => void }) {
  const { route, self } = props;
  if (route.startsWith('admin/') && self.role !== 'admin') return <p class="error">This page is for administrators.</p>;
  switch (route) {
    case '':
      return <OverviewPage self={self} go={props.go} />;
    case 'tasks':
      return <TasksPage self={self} apiKey={props.apiKey} />;
    case 'keys':
      return <KeysPage onKeyCreated={props.onKeyCreated} />;
    case 'ledger':
      return <LedgerPage self={self} />;
    case 'prices':
      return <PricesPage />;
    case 'webhooks':
      return <WebhooksPage />;
    case 'account':
      return <AccountPage self={self} />;
    case 'admin/metrics':
      return <AdminMetricsPage />;
    case 'admin/users':
      return <AdminUsersPage self={self} />;
    case 'admin/tasks':
      return <AdminTasksPage />;
    case 'admin/usage':
      return <AdminUsagePage />;
    case 'admin/channels':
      return <AdminChannelsPage />;
    case 'admin/prices':
      return <AdminPricesPage />;
    default:
      return <p class="error">No such page.</p>;
  }
}

export function App() {
  /** undefined: not known yet; null: signed out. */
  const [self, setSelf] = useState<Self | null | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [feed, setFeed] = useState<LiveEvents | undefined>(undefined);
  const [liveState, setLiveState] = useState<LiveState>('connecting');
  const [apiKey, setApiKey] = useState<string | undefined>(undefined);
  const [route, go] = useRoute();

  const refreshSelf = () =>
    get<Self>('/api/user/self').then(
      (s) => {
        setSelf(s);
        setError(undefined);
      },
      (err: unknown) => {
        if (err instanceof ApiError && err.status === 401) setSelf(null);
        else setError(messageOf(err));
      },
    );
  useEffect(() => void refreshSelf(), []);
  // A session that ended under the page (expired, signed out in another tab) shows the login form.
  useEffect(() => {
    const ended = () => {
      setApiKey(undefined);
      setSelf(null);
    };
    window.addEventListener(SESSION_ENDED, ended);
    return () => window.removeEventListener(SESSION_ENDED, ended);
  }, []);
  const refreshSelfSoon = useDebounced(() => void refreshSelf(), 200);

  // One stream per signed-in user; the account's figures follow its billing events.
  const userId = self?.id;
  const accountId = self?.account_id;
  useEffect(() => {
    if (!userId) return;
    const live = openLiveEvents(setLiveState);
    const unsubscribe = live.feed.subscribe((event) => {
      if (event.accountId === accountId && event.type.startsWith('Quota')) refreshSelfSoon();
    });
    setFeed(live.feed);
    return () => {
      unsubscribe();
      live.close();
      setFeed(undefined);
    };
  }, [userId, accountId]);

  const signOut = async () => {
    try {
      await api('POST', '/api/user/logout');
    } finally {
      setApiKey(undefined);
      setSelf(null);
    }
  };

  if (self === undefined) return <main class="loading">{error ? <p class="error">{error}</p> : 'Loading…'}</main>;
  if (self === null) return <LoginPage onSignedIn={() => void refreshSelf()} />;
  if (!feed) return <main class="loading">Connecting…</main>;
  return (
    <LiveContext.Provider value={feed}>
      <div class="shell">
        <nav class="sidebar">
          <div class="brand">Gateway console</div>
          {USER_PAGES.map(([r, label]) => (
            <NavLink key={r} route={r} current={route} go={go}>
              {label}
            </NavLink>
          ))}
          {self.role === 'admin' && (
            <>
              <div class="nav-section">Administration</div>
              {ADMIN_PAGES.map(([r, label]) => (
                <NavLink key={r} route={r} current={route} go={go}>
                  {label}
                </NavLink>
              ))}
            </>
          )}
        </nav>
        <div class="main">
          <header class="topbar">
            <div>
              <strong data-testid="username">{self.username}</strong>{' '}
              <span class="muted">
                {self.role} · group {self.group}
              </span>
            </div>
            <Figures self={self} />
            <div class="topbar-right">
              <span title="live event stream">
                <Badge value={liveState} testId="live-state" />
              </span>
              <button type="button" onClick={() => void signOut()} data-testid="sign-out">
                Sign out
              </button>
            </div>
          </header>
          <main class="content">
            <Page route={route} self={self} apiKey={apiKey} onKeyCreated={setApiKey} go={go} />
          </main>
        </div>
      </div>
    </LiveContext.Provider>
  );
}
