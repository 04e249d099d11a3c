/**
 * API keys (`/api/token/`): the user's keys, a form to make one — its full key is shown once,
 * right here — and each key edited in place (`PUT /api/token/` with the fields that changed: name,
 * enabled or disabled, expiry, spending limit, models, the IP allow-list, requests per minute),
 * enabled, disabled and deleted. A refusal is shown as the API words it.
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

const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/** Unix seconds as a `datetime-local` input's value, in the reader's zone (to the minute). */
function localInput(seconds: number): string {
  const at = new Date(seconds * 1000);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}T${pad(at.getHours())}:${pad(at.getMinutes())}`;
}

/** A key's settings as the form holds them: text, empty meaning the default. */
interface Draft {
  name: string;
  /** Empty: unlimited. */
  limit: string;
  /** Empty: every model. */
  models: string;
  /** Empty: never. */
  expires: string;
  /** Empty: anywhere. */
  ips: string;
  /** Empty: the gateway's default; 0: no limit. */
  rate: string;
}

const EMPTY: Draft = { name: '', limit: '', models: '', expires: '', ips: '', rate: '' };

const draftOf = (t: Token): Draft => ({
  name: t.name,
  limit: t.unlimited_quota ? '' : String(t.remain_quota),
  models: t.model_limits.join(', '),
  expires: t.expired_time < 0 ? '' : localInput(t.expired_time),
  ips: t.allow_ips.join('\n'),
  rate: t.rate_limit_per_minute === null ? '' : String(t.rate_limit_per_minute),
});

/** The API's fields for a draft; with `was`, only those that differ from it. */
function fieldsOf(d: Draft, was?: Draft): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const changed = (field: keyof Draft) => !was || d[field].trim() !== was[field].trim();
  if (changed('name')) body.name = d.name.trim();
  if (changed('limit')) Object.assign(body, d.limit.trim() === '' ? { unlimited_quota: true } : { unlimited_quota: false, remain_quota: Number(d.limit) });
  if (!was || !sameList(list(d.models), list(was.models))) {
    if (was || list(d.models).length > 0) body.model_limits = list(d.models);
  }
  if (changed('expires')) {
    if (d.expires !== '') body.expired_time = Math.floor(new Date(d.expires).getTime() / 1000);
    else if (was) body.expired_time = -1;
  }
  if (!was || !sameList(list(d.ips), list(was.ips))) {
    if (was || list(d.ips).length > 0) body.allow_ips = list(d.ips);
  }
  if (changed('rate')) {
    if (d.rate.trim() !== '') body.rate_limit_per_minute = Number(d.rate);
    else if (was) body.rate_limit_per_minute = null;
  }
  return body;
}

/** The inputs of a key's settings, shared by the new-key and the edit forms. */
function KeyFields(props: { draft: Draft; set: (d: Draft) => void; prefix: string }) {
  const { draft, set, prefix } = props;
  const field = (name: keyof Draft) => ({
    value: draft[name],
    onInput: (e: { currentTarget: { value: string } }) => set({ ...draft, [name]: e.currentTarget.value }),
    'data-testid': `${prefix}-${name}`,
  });
  return (
    <>
      <label>
        Name
        <input maxLength={64} placeholder="my key" {...field('name')} />
      </label>
      <label>
        Spending limit
        <input type="number" min={0} step={1} placeholder="unlimited" {...field('limit')} />
      </label>
      <label>
        Models
        <input placeholder="every model" {...field('models')} />
      </label>
      <label>
        Expires
        <input type="datetime-local" {...field('expires')} />
      </label>
      <label>
        Requests per minute
        <input type="number" min={0} step={1} placeholder="gateway default" title="empty: the gateway's default; 0: no limit" {...field('rate')} />
      </label>
      <label class="wide">
        Allowed IPs
        <textarea rows={2} placeholder="anywhere (addresses or CIDR ranges, comma or newline separated)" {...field('ips')} />
      </label>
    </>
  );
}

function NewKeyForm(props: { onCreated: (token: Token) => void }) {
  const [draft, setDraft] = useState<Draft>(EMPTY);
  const form = useSubmit(async () => {
    const body = fieldsOf(draft);
    // Without a limit the key is unlimited (the API's default too).
    delete body.unlimited_quota;
    props.onCreated(await api<Token>('POST', '/api/token/', body));
    setDraft(EMPTY);
  });
  return (
    <form class="inline-form" onSubmit={form.onSubmit} data-testid="new-key-form">
      <KeyFields draft={draft} set={setDraft} prefix="new-key" />
      <button type="submit" class="primary" disabled={form.busy} data-testid="create-key">
        Create key
      </button>
      <ErrorLine error={form.error} />
    </form>
  );
}

function EditKeyForm(props: { token: Token; onSaved: () => void; onCancel: () => void }) {
  const { token } = props;
  const [draft, setDraft] = useState<Draft>(() => draftOf(token));
  const [status, setStatus] = useState<1 | 2>(token.status);
  const form = useSubmit(async () => {
    const body = fieldsOf(draft, draftOf(token));
    if (status !== token.status) body.status = status;
    if (Object.keys(body).length > 0) await api<Token>('PUT', '/api/token/', { id: token.id, ...body });
    props.onSaved();
  });
  return (
    <form class="inline-form" onSubmit={form.onSubmit} data-testid="edit-key-form">
      <KeyFields draft={draft} set={setDraft} prefix="edit-key" />
      <label>
        Status
        <select value={String(status)} onChange={(e) => setStatus(e.currentTarget.value === '2' ? 2 : 1)} data-testid="edit-key-status">
          <option value="1">enabled</option>
          <option value="2">disabled</option>
        </select>
      </label>
      <button type="submit" class="primary" disabled={form.busy} data-testid="save-key">
        Save
      </button>
      <button type="button" onClick={props.onCancel}>
        Cancel
      </button>
      <ErrorLine error={form.error} />
    </form>
  );
}

const rateOf = (t: Token) =>
  t.rate_limit_per_minute === null ? (
    <span class="muted">default</span>
  ) : t.rate_limit_per_minute === 0 ? (
    'no limit'
  ) : (
    `${quota(t.rate_limit_per_minute)} / min`
  );

const COLUMNS = 11;

export function KeysPage(props: { onKeyCreated: (key: string) => void }) {
  const tokens = useLoad(() => get<Page<Token>>('/api/token/?size=100'));
  const [created, setCreated] = useState<Token | undefined>(undefined);
  const [editing, setEditing] = useState<string | undefined>(undefined);
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
          <table class="stack keys" data-testid="keys-table">
            <thead>
              <tr>
                <th>Name</th>
                <th>Key</th>
                <th>Status</th>
                <th class="num">Used</th>
                <th class="num">Left</th>
                <th>Models</th>
                <th>Rate limit</th>
                <th>Allowed IPs</th>
                <th>Expires</th>
                <th>Created</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {tokens.value.items.map((t) => [
                <tr key={t.id} data-token-id={t.id} class={editing === t.id ? 'open' : ''}>
                  <td data-label="Name" data-testid="key-name">
                    {t.name || <span class="muted">(no name)</span>}
                  </td>
                  <td data-label="Key">
                    <code>{t.key}</code>
                  </td>
                  <td data-label="Status">
                    <Badge value={t.status === 1 ? 'enabled' : 'disabled'} testId="key-status" />
                  </td>
                  <td data-label="Used" class="num">
                    {quota(t.used_quota)}
                  </td>
                  <td data-label="Left" class="num" data-testid="key-left">
                    {t.unlimited_quota ? 'unlimited' : quota(t.remain_quota)}
                  </td>
                  <td data-label="Models">{t.model_limits.length ? t.model_limits.join(', ') : <span class="muted">all</span>}</td>
                  <td data-label="Rate limit" data-testid="key-rate">
                    {rateOf(t)}
                  </td>
                  <td data-label="Allowed IPs" data-testid="key-ips">
                    {t.allow_ips.length ? t.allow_ips.join(', ') : <span class="muted">anywhere</span>}
                  </td>
                  <td data-label="Expires">{unixTime(t.expired_time)}</td>
                  <td data-label="Created">{unixTime(t.created_time)}</td>
                  <td class="row-actions">
                    <button
                      type="button"
                      class={editing === t.id ? 'primary' : ''}
                      aria-expanded={editing === t.id}
                      onClick={() => setEditing(editing === t.id ? undefined : t.id)}
                      data-testid="edit-key"
                    >
                      Edit
                    </button>
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
                </tr>,
                editing === t.id && (
                  <tr key={`${t.id}-edit`} class="detail-row" data-edit-of={t.id}>
                    <td colSpan={COLUMNS}>
                      <EditKeyForm
                        token={t}
                        onCancel={() => setEditing(undefined)}
                        onSaved={() => {
                          setEditing(undefined);
                          tokens.reload();
                        }}
                      />
                    </td>
                  </tr>
                ),
              ])}
            </tbody>
          </table>
        )}
      </Card>
    </>
  );
}
