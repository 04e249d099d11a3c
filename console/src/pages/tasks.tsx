/**
 * The account's tasks (`GET /api/tasks`) with live status: events of the stream move a task's
 * status and progress at once, then the list is read again for results and charges. The view
 * behind the list may trail the stream by a moment; a task the stream has moved further than the
 * list shows keeps the stream's state and the list is read again shortly.
 *
 * A task is shown completed only once the list has it completed, with its results: the
 * `TaskSucceeded` event carries the results as stored references, not the signed URLs the list
 * gives, so on that event the row shows the task at 100 % still in progress until the list read
 * that follows it. (Marking it completed on the event showed a finished task without results until
 * that read.) A failure is shown at once: its event carries the error.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { get, messageOf } from '../api';
import { SubmitTask, isAsyncImageModel } from '../components/submit-task';
import { TaskDetail } from '../components/task-detail';
import { Badge, Card, Empty, ErrorLine, Pager } from '../components/ui';
import { quota, time } from '../format';
import { useLoad } from '../load';
import { useDebounced, useLiveEvents } from '../live';
import type { LiveEvent, Page, PriceList, Self, TaskStatus, TaskSummary } from '../types';

const PAGE_SIZE = 20;
const RANK: Readonly<Record<TaskStatus, number>> = { queued: 0, in_progress: 1, completed: 2, failed: 2 };
/** How often the list is read again while it trails the stream (then the next event retries). */
const MAX_CATCH_UP = 20;

/** The fetched list, each task kept at least as far along as the stream already showed it. */
function merge(local: readonly TaskSummary[] | undefined, fetched: readonly TaskSummary[]): { tasks: TaskSummary[]; behind: boolean } {
  const seen = new Map((local ?? []).map((t) => [t.id, t]));
  let behind = false;
  const tasks = fetched.map((f) => {
    const l = seen.get(f.id);
    if (!l || RANK[l.status] < RANK[f.status] || (l.status === f.status && l.progress <= f.progress)) return f;
    behind = true;
    return { ...f, status: l.status, progress: Math.max(l.progress, f.progress), error: f.error ?? l.error, completed_at: f.completed_at ?? l.completed_at };
  });
  return { tasks, behind };
}

/** What an event of the stream tells of a task, before the list has it. */
function liveStatus(task: TaskSummary, event: LiveEvent): TaskSummary {
  const data = event.data ?? {};
  const text = (v: unknown) => (typeof v === 'string' ? v : '');
  const next: Partial<Record<string, Pick<TaskSummary, 'status' | 'progress'> & Partial<TaskSummary>>> = {
    TaskProgressed: {
      status: data.status === 'in_progress' ? 'in_progress' : 'queued',
      progress: typeof data.progress === 'number' ? data.progress : task.progress,
    },
    // Not `completed` yet: the results come with the list (signed), read on this event.
    TaskSucceeded: { status: 'in_progress', progress: 100 },
    TaskFailed: { status: 'failed', progress: task.progress, error: { code: text(data.code), message: text(data.reason) } },
  };
  const change = next[event.type];
  if (!change || RANK[change.status] < RANK[task.status] || (change.status === task.status && change.progress < task.progress)) return task;
  return { ...task, ...change };
}

function Progress(props: { task: TaskSummary }) {
  const { status, progress } = props.task;
  return (
    <span class="status-cell">
      <Badge value={status} testId="task-status" />
      {(status === 'queued' || status === 'in_progress') && (
        <span class="progress" title={`${progress}%`}>
          <span style={{ width: `${progress}%` }} />
        </span>
      )}
    </span>
  );
}

export function TasksPage(props: { self: Self; apiKey: string | undefined }) {
  const [tasks, setTasks] = useState<TaskSummary[] | undefined>(undefined);
  const [total, setTotal] = useState(0);
  const [page, setPage] = useState(0);
  const [error, setError] = useState<string | undefined>(undefined);
  const [open, setOpen] = useState<string | undefined>(undefined);
  /** Tasks the stream announced that the list has not shown yet. */
  const announced = useRef(new Set<string>());
  const catchUp = useRef(0);
  const current = useRef(tasks);
  current.current = tasks;

  const prices = useLoad(() => get<PriceList>('/api/user/pricing'));
  const imageModels = (prices.value?.models ?? []).map((m) => m.model).filter(isAsyncImageModel);

  const reloadSoon = useDebounced(() => void load(), 300);
  async function load() {
    try {
      const data = await get<Page<TaskSummary>>(`/api/tasks?size=${PAGE_SIZE}&p=${page}`);
      const merged = merge(current.current, data.items);
      for (const t of data.items) announced.current.delete(t.id);
      setTasks(merged.tasks);
      setTotal(data.total ?? 0);
      setError(undefined);
      const missing = page === 0 && announced.current.size > 0;
      if ((merged.behind || missing) && catchUp.current++ < MAX_CATCH_UP) reloadSoon();
      else catchUp.current = 0;
    } catch (err) {
      setError(messageOf(err));
    }
  }
  useEffect(() => void load(), [page]);

  useLiveEvents((event) => {
    if (event.accountId !== props.self.account_id) return;
    if (event.type === 'TaskSubmitted') announced.current.add(event.key);
    if (event.type.startsWith('Task')) setTasks((ts) => ts?.map((t) => (t.id === event.key ? liveStatus(t, event) : t)));
    // Results, charges and expiries come with the list.
    if (/^(Task(Submitted|Succeeded|Failed)|AssetsExpired|Quota(Settled|Released))$/.test(event.type)) {
      catchUp.current = 0;
      reloadSoon();
    }
  });

  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  return (
    <>
      <Card title="Submit a task">
        <SubmitTask
          apiKey={props.apiKey}
          imageModels={imageModels}
          onSubmitted={(id) => {
            announced.current.add(id);
            setOpen(id);
            if (page !== 0) setPage(0);
            else void load();
          }}
        />
      </Card>
      <Card
        title="Tasks"
        actions={
          <>
            <span class="muted">{total} in all</span>
            <button onClick={() => void load()}>Refresh</button>
          </>
        }
      >
        <ErrorLine error={error} />
        {tasks && tasks.length === 0 && <Empty>No tasks yet: submit one above, or with an API key from any client.</Empty>}
        {tasks && tasks.length > 0 && (
          <table class="tasks stack" data-testid="tasks-table">
            <thead>
              <tr>
                <th>Submitted</th>
                <th>Model</th>
                <th>Prompt</th>
                <th>Status</th>
                <th class="num">Cost</th>
              </tr>
            </thead>
            <tbody>
              {tasks.map((t) => [
                <tr key={t.id} class={`task-row ${open === t.id ? 'open' : ''}`} data-task-id={t.id} onClick={() => setOpen(open === t.id ? undefined : t.id)}>
                  <td data-label="Submitted">{time(t.created_at)}</td>
                  <td data-label="Model">{t.model}</td>
                  <td data-label="Prompt" class="prompt">
                    {t.prompt ?? <span class="muted">{t.action}</span>}
                  </td>
                  <td data-label="Status">
                    <Progress task={t} />
                  </td>
                  <td data-label="Cost" class="num" data-testid="task-cost">
                    {t.charged !== null ? quota(t.charged) : <span class="muted">{quota(t.reserved)} reserved</span>}
                  </td>
                </tr>,
                open === t.id && (
                  <tr key={`${t.id}-detail`} class="detail-row">
                    <td colSpan={5}>
                      <TaskDetail task={t} />
                    </td>
                  </tr>
                ),
              ])}
            </tbody>
          </table>
        )}
        <Pager page={page} pages={pages} setPage={setPage} labels={['Newer', 'Older']} />
      </Card>
    </>
  );
}
