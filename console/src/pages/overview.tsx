/** The first page: spending over time, usage by model and by key, and the latest tasks, all live. */
import { get } from '../api';
import { SpendingChart } from '../components/spending-chart';
import { Badge, Card, Empty, ErrorLine } from '../components/ui';
import { UsageCard } from '../components/usage';
import { quota, time } from '../format';
import { useLoad } from '../load';
import { useDebounced, useLiveEvents } from '../live';
import type { Page, Self, TaskSummary } from '../types';
import { useLedgerChartEntries } from './ledger';

export function OverviewPage(props: { self: Self; go: (route: string) => void }) {
  const chart = useLedgerChartEntries(props.self);
  const recent = useLoad(() => get<Page<TaskSummary>>('/api/tasks?size=5'));
  const reload = useDebounced(recent.reload, 400);
  useLiveEvents((event) => {
    if (event.accountId === props.self.account_id && event.type.startsWith('Task')) reload();
  });
  return (
    <>
      <Card title="Spending over time" actions={<button onClick={() => props.go('ledger')}>Statement</button>}>
        <ErrorLine error={chart.error} />
        {chart.value && <SpendingChart entries={chart.value.items} />}
      </Card>
      <UsageCard path="/api/usage" accountId={props.self.account_id} />
      <Card title="Latest tasks" actions={<button onClick={() => props.go('tasks')}>All tasks</button>}>
        <ErrorLine error={recent.error} />
        {recent.value && recent.value.items.length === 0 && <Empty>No tasks yet.</Empty>}
        {recent.value && recent.value.items.length > 0 && (
          <table class="stack">
            <tbody>
              {recent.value.items.map((t) => (
                <tr key={t.id}>
                  <td data-label="Submitted">{time(t.created_at)}</td>
                  <td data-label="Model">{t.model}</td>
                  <td data-label="Prompt" class="prompt">
                    {t.prompt ?? ''}
                  </td>
                  <td data-label="Status">
                    <Badge value={t.status} />
                  </td>
                  <td data-label="Charged" class="num">
                    {t.charged !== null ? quota(t.charged) : ''}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Card>
    </>
  );
}
