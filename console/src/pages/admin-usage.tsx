/**
 * Administration: usage by model and by key (`/api/admin/usage`) for everyone summed, or for one
 * user chosen from the list — the charts and totals a user sees on their overview.
 */
import { useState } from 'preact/hooks';
import { get } from '../api';
import { Card, ErrorLine } from '../components/ui';
import { UsageCard } from '../components/usage';
import { useLoad } from '../load';
import type { AdminUser, Page } from '../types';

export function AdminUsagePage() {
  const users = useLoad(() => get<Page<AdminUser>>('/api/user/?size=100'));
  const [userId, setUserId] = useState('');
  const user = users.value?.items.find((u) => u.id === userId);
  return (
    <>
      <Card title="Whose usage">
        <ErrorLine error={users.error} />
        <form class="inline-form" onSubmit={(e) => e.preventDefault()}>
          <label>
            User
            <select value={userId} onChange={(e) => setUserId(e.currentTarget.value)} data-testid="usage-user">
              <option value="">everyone</option>
              {(users.value?.items ?? []).map((u) => (
                <option key={u.id} value={u.id}>
                  {u.username}
                </option>
              ))}
            </select>
          </label>
        </form>
      </Card>
      <UsageCard
        key={userId}
        path="/api/admin/usage"
        userId={userId || undefined}
        accountId={user?.account_id}
        title={user ? `Usage of ${user.username}` : "Everyone's usage"}
      />
    </>
  );
}
