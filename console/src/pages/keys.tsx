/**
 * API keys (`/api/token/`): the user's keys, a form to make one — its full key is shown once,
 * right here — and enabling, disabling and deleting.
 */
import { useState } from 'preact/hooks';
import { api, get } from '../api';
import { ActionButton, Badge, Card, Empty, ErrorLine, useSubmit } from '../components/ui';
import { quota, unixTime } from '../format';
import { useLoad } from '../load';
import type { Page, Token } from '../types';

/** `a, b\nc` → ['a', 'b', 'c']. */
const list = (text: string): string[] =>
  text
    .split(/[,\n]/)
    .map((s) => s.trim())
    .filter(Boolean);

function NewKeyForm(props: { onCreated: (token: Token) => void }) {
  const [name, setName] = useState('');
  const [limit, setLimit] = useState('');
  const [models, setModels] = useState('');
  const [expires, setExpires] = useState('');
  const form = useSubmit(async () => {
    const body: Record<string, unknown> = { name };
    if (limit.trim() !== '') body.remain_quota = Number(limit);
    else body.unlimited_quota = true;
    if (models.trim() !== '') body.model_limits = list(models);
    if (expires !== '') body.expired_time = Math.floor(new Date(expires).getTime() / 1000);
    props.onCreated(await api<Token>('POST', '/api/token/', body));
    setName('');
    setLimit('');
    setModels('');
    setExpires('');
  });
  return (
    <form class="inline-form" onSubmit={form.onSubmit} data-testid="new-key-form">
      <label>
        Name
        <input value={name} maxLength={64} onInput={(e) => setName(e.currentTarget.value)} placeholder="my key" data-testid="new-key-name" />
      </label>
      <label>
        Spending limit
        <input type="number" min={0} step={1} value={limit} onInput={(e) => setLimit(e.currentTarget.value)} placeholder="unlimited" />
      </label>
      <label>
        Models
        <input value={models} onInput={(e) => setModels(e.currentTarget.value)} placeholder="every model" />
      </label>
      <label>
        Expires
        <input type="datetime-local" value={expires} onInput={(e) => setExpires(e.currentTarget.value)} />
      </label>
      <button type="submit" class="primary" disabled={form.busy} data-testid="create-key">
        Create key
      </button>
      <ErrorLine error={form.error} />
    </form>
  );
}

export function KeysPage(props: { onKeyCreated: (key: string) => void }) {
  const tokens = useLoad(() => get<Page<Token>>('/api/token/?size=100'));
  const [created, setCreated] = useState<Token | undefined>(undefined);
  const setStatus = async (token: Token, status: 1 | 2) => {
    await api('PUT', '/api/token/', { id: token.id, status });
    tokens.reload();
  };
  const remove = async (token: Token) => {
    await api('DELETE', `/api/token/${token.id}`);
    if (created?.id === token.id) setCreated(undefined);
    tokens.reload();
  };
  return (
    <>
      <Card title="New API key">
        <NewKeyForm
          onCreated={(token) => {
            setCreated(token);
            props.onKeyCreated(token.key);
            tokens.reload();
          }}
        />
        {created && (
          <div class="notice" data-testid="new-key-notice">
            <p>
              The full key of <strong>{created.name || created.id}</strong>, shown only this once (this page keeps it until you sign out, to submit tasks):
            </p>
            <div class="secret-row">
              <code data-testid="new-key">{created.key}</code>
              <ActionButton label="Copy" action={() => navigator.clipboard.writeText(created.key)} />
            </div>
          </div>
        )}
      </Card>
      <Card title="Your API keys" actions={<button onClick={tokens.reload}>Refresh</button>}>
        <ErrorLine error={tokens.error} />
        {tokens.value && tokens.value.items.length === 0 && <Empty>No keys yet.</Empty>}
        {tokens.value && tokens.value.items.length > 0 && (
          <table data-testid="keys-table">
            <thead>
              <tr>
                <th>Name</th>
                <th>Key</th>
                <th>Status</th>
                <th class="num">Used</th>
                <th class="num">Left</th>
                <th>Models</th>
                <th>Expires</th>
                <th>Created</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {tokens.value.items.map((t) => (
                <tr key={t.id} data-token-id={t.id}>
                  <td>{t.name || <span class="muted">(no name)</span>}</td>
                  <td>
                    <code>{t.key}</code>
                  </td>
                  <td>
                    <Badge value={t.status === 1 ? 'enabled' : 'disabled'} />
                  </td>
                  <td class="num">{quota(t.used_quota)}</td>
                  <td class="num">{t.unlimited_quota ? 'unlimited' : quota(t.remain_quota)}</td>
                  <td>{t.model_limits.length ? t.model_limits.join(', ') : <span class="muted">all</span>}</td>
                  <td>{unixTime(t.expired_time)}</td>
                  <td>{unixTime(t.created_time)}</td>
                  <td class="row-actions">
                    {t.status === 1 ? (
                      <ActionButton label="Disable" action={() => setStatus(t, 2)} />
                    ) : (
                      <ActionButton label="Enable" action={() => setStatus(t, 1)} />
                    )}
                    <ActionButton
                      label="Delete"
                      kind="danger"
                      confirm={`Delete the key "${t.name || t.id}"? Requests with it will be refused.`}
                      action={() => remove(t)}
                    />
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
