/**
 * One task opened: its prompt, results, error, what it moved on the account (the ledger filtered
 * to the task) and its completion callback's delivery attempts, refreshed live.
 */
import { ApiError, get } from '../api';
import { quota, signed, time } from '../format';
import { useLoad } from '../load';
import { useDebounced, useLiveEvents } from '../live';
import type { CallbackRecord, LedgerEntry, Page, TaskSummary } from '../types';
import { ResultView } from './result-view';
import { Badge, Empty, ErrorLine } from './ui';

/** The task's callback record, or null when it has none (404). */
async function callbackOf(taskId: string): Promise<CallbackRecord | null> {
  try {
    return await get<CallbackRecord>(`/api/callbacks/${encodeURIComponent(taskId)}`);
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null;
    throw err;
  }
}

function Callbacks(props: { taskId: string }) {
  const callback = useLoad(() => callbackOf(props.taskId), [props.taskId]);
  const reload = useDebounced(callback.reload);
  useLiveEvents((event) => {
    if (event.key === props.taskId && event.type.startsWith('Callback')) reload();
  });
  const c = callback.value;
  return (
    <div class="detail-block" data-testid="task-callbacks">
      <h3>Completion callback</h3>
      <ErrorLine error={callback.error} />
      {c === null && <Empty>No completion callback for this task.</Empty>}
      {c && (
        <>
          <p>
            <Badge value={c.state} /> to <code>{c.url}</code>
            {c.next_attempt_at && <span class="muted"> · next attempt {time(c.next_attempt_at)}</span>}
          </p>
          {c.attempts.length === 0 ? (
            <Empty>No attempt yet.</Empty>
          ) : (
            <table>
              <thead>
                <tr>
                  <th>#</th>
                  <th>At</th>
                  <th class="num">HTTP status</th>
                  <th class="num">Latency</th>
                  <th>Error</th>
                </tr>
              </thead>
              <tbody>
                {c.attempts.map((a) => (
                  <tr key={a.attempt}>
                    <td>{a.attempt}</td>
                    <td>{time(a.at)}</td>
                    <td class="num">{a.status || '—'}</td>
                    <td class="num">{a.latency_ms} ms</td>
                    <td>{a.error ?? ''}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      )}
    </div>
  );
}

function Movements(props: { taskId: string; status: string; charged: number | null }) {
  const ledger = useLoad(
    () => get<Page<LedgerEntry>>(`/api/billing/ledger?task_id=${encodeURIComponent(props.taskId)}`),
    [props.taskId, props.status, props.charged],
  );
  return (
    <div class="detail-block">
      <h3>On the account</h3>
      <ErrorLine error={ledger.error} />
      {ledger.value && (
        <table>
          <tbody>
            {ledger.value.items.map((e) => (
              <tr key={e.id}>
                <td>{time(e.at)}</td>
                <td>{e.type.replace('Quota', '')}</td>
                <td class="num">{quota(e.amount)}</td>
                <td class="num">{e.balance_delta !== 0 ? `balance ${signed(e.balance_delta)}` : `reserved ${signed(e.reserved_delta)}`}</td>
                <td class="muted">{e.note ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

export function TaskDetail(props: { task: TaskSummary }) {
  const t = props.task;
  return (
    <div class="task-detail" data-testid="task-detail">
      <dl class="facts">
        <dt>Task</dt>
        <dd>
          <code>{t.id}</code>
        </dd>
        <dt>Family / action</dt>
        <dd>
          {t.family} / {t.action}
          {t.sync ? ' (synchronous)' : ''}
        </dd>
        <dt>Prompt</dt>
        <dd>{t.prompt ?? <span class="muted">—</span>}</dd>
        <dt>Submitted</dt>
        <dd>{time(t.created_at)}</dd>
        <dt>Finished</dt>
        <dd>{time(t.completed_at)}</dd>
        {t.assets_expire_at && (
          <>
            <dt>Files kept until</dt>
            <dd>{time(t.assets_expire_at)}</dd>
          </>
        )}
      </dl>
      {t.error && (
        <p class="error">
          {t.error.code}: {t.error.message}
        </p>
      )}
      {t.results.length > 0 && (
        <div class="results" data-testid="task-results">
          {t.results.map((r, i) => (
            <ResultView key={i} result={r} index={i} />
          ))}
        </div>
      )}
      <div class="detail-columns">
        <Movements taskId={t.id} status={t.status} charged={t.charged} />
        <Callbacks taskId={t.id} />
      </div>
    </div>
  );
}
