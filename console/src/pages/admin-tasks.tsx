/**
 * Administration: the task log across users (`GET /api/admin/tasks`), newest first, filtered by
 * user, model, family, status and the days it was created; page by page, and every matching task
 * as one CSV download of the same filters (`format=csv`; the link carries the session cookie like
 * any same-origin request). The first page follows the live stream: a task submitted, finished or
 * failed anywhere reads it again.
 */
import { useState } from 'preact/hooks';
import { get } from '../api';
import { Badge, Card, Empty, ErrorLine, Pager } from '../components/ui';
import { quota, time } from '../format';
import { useDebounced, useLiveEvents } from '../live';
import { useLoad } from '../load';
import type { AdminTask, AdminUser, Page, PriceTable, TaskStatus } from '../types';

const PAGE_SIZE = 50;
const STATUSES: readonly TaskStatus[] = ['queued', 'in_progress', 'completed', 'failed'];

interface Filters {
  user_id: string;
  model: string;
  family: string;
  status: string;
  /** `YYYY-MM-DD`, the reader's days. */
  from: string;
  to: string;
}

const NONE: Filters = { user_id: '', model: '', family: '', status: '', from: '', to: '' };

/** The query of the filters: a day's bounds in the reader's zone, as the instants the API compares. */
function queryOf(f: Filters): URLSearchParams {
  const q = new URLSearchParams();
  for (const name of ['user_id', 'model', 'family', 'status'] as const) if (f[name].trim() !== '') q.set(name, f[name].trim());
  if (f.from) q.set('from', new Date(`${f.from}T00:00:00`).toISOString());
  if (f.to) q.set('to', new Date(`${f.to}T23:59:59.999`).toISOString());
  return q;
}

function FilterForm(props: { users: AdminUser[]; models: string[]; apply: (f: Filters) => void }) {
  const [f, setF] = useState<Filters>(NONE);
  const field = (name: keyof Filters) => ({
    value: f[name],
    onInput: (e: { currentTarget: { value: string } }) => setF({ ...f, [name]: e.currentTarget.value }),
    'data-testid': `filter-${name.replace('_id', '')}`,
  });
  return (
    <form
      class="inline-form"
      onSubmit={(e) => {
        e.preventDefault();
        props.apply(f);
      }}
      data-testid="task-log-filters"
    >
      <label>
        User
        <select {...field('user_id')}>
          <option value="">every user</option>
          {props.users.map((u) => (
            <option key={u.id} value={u.id}>
              {u.username}
            </option>
          ))}
        </select>
      </label>
      <label>
        Model
        <input list="task-log-models" placeholder="every model" {...field('model')} />
        <datalist id="task-log-models">
          {props.models.map((m) => (
            <option key={m} value={m} />
          ))}
        </datalist>
      </label>
      <label>
        Family
        <input placeholder="every family" {...field('family')} />
      </label>
      <label>
        Status
        <select {...field('status')}>
          <option value="">any</option>
          {STATUSES.map((s) => (
            <option key={s} value={s}>
              {s.replace('_', ' ')}
            </option>
          ))}
        </select>
      </label>
      <label>
        From
        <input type="date" {...field('from')} />
      </label>
      <label>
        To
        <input type="date" {...field('to')} />
      </label>
      <button type="submit" class="primary" data-testid="apply-filters">
        Apply
      </button>
      <button
        type="button"
        onClick={() => {
          setF(NONE);
          props.apply(NONE);
        }}
      >
        Clear
      </button>
    </form>
  );
}

export function AdminTasksPage() {
  const [filters, setFilters] = useState<Filters>(NONE);
  const [page, setPage] = useState(0);
  const users = useLoad(() => get<Page<AdminUser>>('/api/user/?size=100'));
  const prices = useLoad(() => get<PriceTable>('/api/pricing'));
  const query = queryOf(filters);
  const path = `/api/admin/tasks?${query.toString()}`;
  const tasks = useLoad(() => get<Page<AdminTask>>(`${path}&size=${PAGE_SIZE}&p=${page}`), [path, page]);
  const reloadSoon = useDebounced(tasks.reload, 500);
  useLiveEvents((event) => {
    if (page === 0 && /^Task(Submitted|Succeeded|Failed)$/.test(event.type)) reloadSoon();
  });
  query.set('format', 'csv');
  const csv = `/api/admin/tasks?${query.toString()}`;
  const userList = users.value?.items ?? [];
  const userOf = new Map(userList.map((u) => [u.account_id, u.username]));
  const total = tasks.value?.total ?? 0;
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  return (
    <>
      <Card title="Filter">
        <ErrorLine error={users.error} />
        <FilterForm
          users={userList}
          models={Object.keys(prices.value?.models ?? {}).sort()}
          apply={(f) => {
            setPage(0);
            setFilters(f);
          }}
        />
      </Card>
      <Card
        title="Task log"
        testId="task-log"
        actions={
          <>
            <span class="muted" data-testid="task-log-total">
              {quota(total)} in all
            </span>
            <a class="button" href={csv} download data-testid="download-csv">
              Download CSV
            </a>
            <button onClick={tasks.reload}>Refresh</button>
          </>
        }
      >
        <ErrorLine error={tasks.error} />
        {tasks.value && tasks.value.items.length === 0 && <Empty>No task matches.</Empty>}
        {tasks.value && tasks.value.items.length > 0 && (
          <table class="stack task-log" data-testid="task-log-table">
            <thead>
              <tr>
                <th>Task</th>
                <th>Created</th>
                <th>User</th>
                <th>Key</th>
                <th>Model</th>
                <th>Channel</th>
                <th>Status</th>
                <th class="num">Charged</th>
              </tr>
            </thead>
            <tbody>
              {tasks.value.items.map((t) => (
                <tr key={t.id} data-task-id={t.id}>
                  <td data-label="Task">
                    <code>{t.id}</code>
                  </td>
                  <td data-label="Created">{time(t.created_at)}</td>
                  <td data-label="User" data-testid="task-user">
                    {userOf.get(t.account_id) ?? <code class="muted">{t.account_id}</code>}
                  </td>
                  <td data-label="Key">{t.token_id ? <code>{t.token_id}</code> : <span class="muted">—</span>}</td>
                  <td data-label="Model" data-testid="task-model">
                    {t.model}
                  </td>
                  <td data-label="Channel">{t.channel_id ? <code>{t.channel_id}</code> : <span class="muted">—</span>}</td>
                  <td data-label="Status">
                    <Badge value={t.status} testId="task-status" />
                  </td>
                  <td data-label="Charged" class="num" data-testid="task-charged">
                    {t.charged !== null ? quota(t.charged) : <span class="muted">{quota(t.reserved)} reserved</span>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <Pager page={page} pages={pages} setPage={setPage} labels={['Newer', 'Older']} />
      </Card>
    </>
  );
}
