/**
 * Administration: the upstream channels (`/api/channel/`) — their health where the API reports
 * it, enabling and disabling, editing, creating and deleting.
 */
import { useState } from 'preact/hooks';
import { api, get } from '../api';
import { ActionButton, Badge, Card, Empty, ErrorLine, useSubmit, type Tone } from '../components/ui';
import { time } from '../format';
import { useLoad } from '../load';
import type { Channel } from '../types';

const FAMILIES = ['images', 'vidgen', 'vid-h3', 'clip', 'motion', 'tune', 'art'];

const list = (text: string): string[] =>
  text
    .split(/[,\n]/)
    .map((s) => s.trim())
    .filter(Boolean);

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function scalar(v: unknown): string {
  if (v === null || v === undefined) return '—';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return `${v}`;
  return JSON.stringify(v) ?? '—';
}

/** A circuit breaker's state as an operator reads it: closed is the healthy one. */
const CIRCUIT: Readonly<Record<string, { label: string; tone: Tone }>> = {
  closed: { label: 'healthy', tone: 'good' },
  half_open: { label: 'recovering', tone: 'busy' },
  open: { label: 'failing', tone: 'bad' },
};

/**
 * A channel's health as the API gives it: an object whose `state` (or `status`, `health`,
 * `circuit`) is the badge — a circuit breaker's `closed` / `half_open` / `open` read as healthy,
 * recovering, failing — and whose other known fields are shown as text; a bare word is a badge.
 */
export function Health(props: { health: unknown }) {
  const h = props.health;
  if (h === undefined || h === null) return <span class="muted">—</span>;
  if (!isRecord(h)) return <Badge value={scalar(h)} testId="channel-health" />;
  const stateKey = ['state', 'status', 'health', 'circuit'].find((k) => typeof h[k] === 'string');
  const state = stateKey ? scalar(h[stateKey]) : undefined;
  const circuit = state ? CIRCUIT[state] : undefined;
  const rest = Object.entries(h).filter(([k, v]) => k !== stateKey && v !== null && v !== undefined);
  return (
    <span class="health" data-testid="channel-health">
      {state && (circuit ? <Badge value={circuit.label} tone={circuit.tone} title={`circuit ${state.replace(/_/g, ' ')}`} /> : <Badge value={state} />)}
      {rest.length > 0 && (
        <small class="muted">
          {rest.map(([k, v]) => (
            <span key={k}>
              {k.replace(/_/g, ' ')}: {k.endsWith('_at') && typeof v === 'string' ? time(v) : scalar(v)}
            </span>
          ))}
        </small>
      )}
    </span>
  );
}

/** A long model list folds away behind its count. */
function Models(props: { models: string[] }) {
  if (props.models.length <= 4) return <>{props.models.join(', ')}</>;
  return (
    <details>
      <summary>{props.models.length} models</summary>
      {props.models.join(', ')}
    </details>
  );
}

function ChannelForm(props: { channel?: Channel; onSaved: () => void; onCancel?: () => void }) {
  const c = props.channel;
  const [name, setName] = useState(c?.name ?? '');
  const [family, setFamily] = useState(c?.family ?? 'images');
  const [baseUrl, setBaseUrl] = useState(c?.base_url ?? '');
  const [key, setKey] = useState('');
  const [models, setModels] = useState(c?.models.join(', ') ?? '');
  const [groups, setGroups] = useState(c?.groups.join(', ') ?? '');
  const [mapping, setMapping] = useState(c && Object.keys(c.model_mapping).length ? JSON.stringify(c.model_mapping) : '');
  const [priority, setPriority] = useState(String(c?.priority ?? 0));
  const [weight, setWeight] = useState(String(c?.weight ?? 1));
  const form = useSubmit(async () => {
    let modelMapping: unknown = {};
    if (mapping.trim()) {
      try {
        modelMapping = JSON.parse(mapping);
      } catch {
        throw new Error('model mapping: must be a JSON object such as {"std-image": "upstream-name"}');
      }
    }
    const body: Record<string, unknown> = {
      name,
      family,
      base_url: baseUrl,
      models: list(models),
      groups: list(groups),
      model_mapping: modelMapping,
      priority: Number(priority),
      weight: Number(weight),
      // An empty key field leaves the stored key as it is when editing.
      ...(key !== '' || !c ? { key } : {}),
    };
    await api(c ? 'PUT' : 'POST', '/api/channel/', c ? { id: c.id, ...body } : body);
    props.onSaved();
  });
  return (
    <form class="inline-form" onSubmit={form.onSubmit}>
      <label>
        Name
        <input required maxLength={64} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <label>
        Family
        <select value={family} onChange={(e) => setFamily(e.currentTarget.value)}>
          {[...new Set([...FAMILIES, family])].map((f) => (
            <option key={f} value={f}>
              {f}
            </option>
          ))}
        </select>
      </label>
      <label class="wide">
        Base URL
        <input required value={baseUrl} onInput={(e) => setBaseUrl(e.currentTarget.value)} placeholder="https://upstream.example.com or /_sim" />
      </label>
      <label>
        Upstream key
        <input type="password" autocomplete="off" value={key} onInput={(e) => setKey(e.currentTarget.value)} placeholder={c?.key_set ? 'unchanged' : 'none'} />
      </label>
      <label class="wide">
        Models
        <input required value={models} onInput={(e) => setModels(e.currentTarget.value)} placeholder="std-image, pro-image" />
      </label>
      <label>
        Groups
        <input value={groups} onInput={(e) => setGroups(e.currentTarget.value)} placeholder="every group" />
      </label>
      <label class="wide">
        Model mapping (JSON)
        <input value={mapping} onInput={(e) => setMapping(e.currentTarget.value)} placeholder="{}" />
      </label>
      <label class="narrow">
        Priority
        <input type="number" step={1} value={priority} onInput={(e) => setPriority(e.currentTarget.value)} />
      </label>
      <label class="narrow">
        Weight
        <input type="number" min={0} step={1} value={weight} onInput={(e) => setWeight(e.currentTarget.value)} />
      </label>
      <button type="submit" class="primary" disabled={form.busy}>
        {c ? 'Save' : 'Create channel'}
      </button>
      {props.onCancel && (
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
      )}
      <ErrorLine error={form.error} />
    </form>
  );
}

export function AdminChannelsPage() {
  const channels = useLoad(() => get<Channel[]>('/api/channel/'));
  const [editing, setEditing] = useState<string | undefined>(undefined);
  const hasHealth = (channels.value ?? []).some((c) => c.health !== undefined);
  const setStatus = async (c: Channel, status: 1 | 2) => {
    await api('PUT', '/api/channel/', { id: c.id, status });
    channels.reload();
  };
  const remove = async (c: Channel) => {
    await api('DELETE', `/api/channel/${c.id}`);
    channels.reload();
  };
  return (
    <>
      <Card title="Channels" actions={<button onClick={channels.reload}>Refresh</button>}>
        <ErrorLine error={channels.error} />
        {channels.value && channels.value.length === 0 && <Empty>No channels: no model can be served.</Empty>}
        {channels.value && channels.value.length > 0 && (
          <table data-testid="channels-table">
            <thead>
              <tr>
                <th>Name</th>
                <th>Family</th>
                <th>Base URL</th>
                <th>Models</th>
                <th>Groups</th>
                <th class="num">Priority</th>
                <th class="num">Weight</th>
                <th>Status</th>
                {hasHealth && <th>Health</th>}
                <th />
              </tr>
            </thead>
            <tbody>
              {channels.value.map((c) => [
                <tr key={c.id} data-channel-id={c.id}>
                  <td title={c.id}>{c.name}</td>
                  <td>{c.family}</td>
                  <td>
                    <code>{c.base_url}</code>
                  </td>
                  <td class="models">
                    <Models models={c.models} />
                  </td>
                  <td>{c.groups.length ? c.groups.join(', ') : <span class="muted">all</span>}</td>
                  <td class="num">{c.priority}</td>
                  <td class="num">{c.weight}</td>
                  <td>
                    <Badge value={c.status === 1 ? 'enabled' : 'disabled'} />
                  </td>
                  {hasHealth && (
                    <td>
                      <Health health={c.health} />
                    </td>
                  )}
                  <td class="row-actions">
                    {c.status === 1 ? (
                      <ActionButton label="Disable" action={() => setStatus(c, 2)} />
                    ) : (
                      <ActionButton label="Enable" action={() => setStatus(c, 1)} />
                    )}
                    <button type="button" onClick={() => setEditing(editing === c.id ? undefined : c.id)}>
                      Edit
                    </button>
                    <ActionButton label="Delete" kind="danger" confirm={`Delete the channel "${c.name}"?`} action={() => remove(c)} />
                  </td>
                </tr>,
                editing === c.id && (
                  <tr key={`${c.id}-edit`} class="detail-row">
                    <td colSpan={hasHealth ? 10 : 9}>
                      <ChannelForm
                        channel={c}
                        onCancel={() => setEditing(undefined)}
                        onSaved={() => {
                          setEditing(undefined);
                          channels.reload();
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
      <Card title="New channel">
        <ChannelForm onSaved={channels.reload} />
      </Card>
    </>
  );
}
