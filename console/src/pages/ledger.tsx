/**
 * The account statement (`/api/billing/ledger`): spending over time as a chart (the latest 500
 * movements) and every movement, page by page, refreshed live as reservations and charges land.
 * A debit by an administrator shows its reason.
 */
import { useState } from 'preact/hooks';
import { get } from '../api';
import { LedgerTable } from '../components/ledger-table';
import { SpendingChart } from '../components/spending-chart';
import { Card, Empty, ErrorLine, Pager } from '../components/ui';
import { useLoad } from '../load';
import { useDebounced, useLiveEvents } from '../live';
import type { LedgerEntry, Page, Self } from '../types';

const PAGE_SIZE = 50;
/** The most the statement answers in one page: what the chart covers. */
export const CHART_ENTRIES = 500;

export function useLedgerChartEntries(self: Self) {
  const entries = useLoad(() => get<Page<LedgerEntry>>(`/api/billing/ledger?size=${CHART_ENTRIES}`));
  const reload = useDebounced(entries.reload, 400);
  useLiveEvents((event) => {
    if (event.accountId === self.account_id && event.type.startsWith('Quota')) reload();
  });
  return entries;
}

export function LedgerPage(props: { self: Self }) {
  const [page, setPage] = useState(0);
  const [model, setModel] = useState('');
  const [filter, setFilter] = useState('');
  const chart = useLedgerChartEntries(props.self);
  const query = `/api/billing/ledger?size=${PAGE_SIZE}&p=${page}${filter ? `&model=${encodeURIComponent(filter)}` : ''}`;
  const ledger = useLoad(() => get<Page<LedgerEntry>>(query), [query]);
  const reload = useDebounced(ledger.reload, 400);
  useLiveEvents((event) => {
    if (event.accountId === props.self.account_id && event.type.startsWith('Quota')) reload();
  });
  const pages = Math.max(1, Math.ceil((ledger.value?.total ?? 0) / PAGE_SIZE));
  return (
    <>
      <Card title="Spending over time">
        <ErrorLine error={chart.error} />
        {chart.value && <SpendingChart entries={chart.value.items} />}
      </Card>
      <Card
        title="Statement"
        actions={
          <form
            class="filter"
            onSubmit={(e) => {
              e.preventDefault();
              setPage(0);
              setFilter(model.trim());
            }}
          >
            <input value={model} onInput={(e) => setModel(e.currentTarget.value)} placeholder="model" aria-label="only this model" />
            <button type="submit">Filter</button>
          </form>
        }
      >
        <ErrorLine error={ledger.error} />
        {ledger.value && ledger.value.items.length === 0 && <Empty>Nothing on this account yet.</Empty>}
        {ledger.value && ledger.value.items.length > 0 && <LedgerTable entries={ledger.value.items} testId="ledger-table" />}
        <Pager page={page} pages={pages} setPage={setPage} labels={['Newer', 'Older']} />
      </Card>
    </>
  );
}
