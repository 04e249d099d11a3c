/**
 * Administration: the price table (`/api/pricing`) — each model's unit price, tier prices and
 * extras, and the groups' ratios. Every change is a PUT merged into the table.
 */
import { useState } from 'preact/hooks';
import { api, get } from '../api';
import { ActionButton, Card, ErrorLine, useSubmit } from '../components/ui';
import { quota } from '../format';
import { useLoad } from '../load';
import type { ModelPrice, PriceTable } from '../types';

const UNITS = ['request', 'image', 'second', 'ktoken'];

const pairsText = (record: Record<string, number> | undefined): string =>
  Object.entries(record ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');

/** `768P=5000, 2K=12000` → {768P: 5000, 2K: 12000}; undefined when empty. */
function parsePairs(field: string, text: string): Record<string, number> | undefined {
  const entries = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((pair) => {
      const [name = '', value = ''] = pair.split('=').map((s) => s.trim());
      if (!name || !/^\d+$/.test(value)) throw new Error(`${field}: write name=price pairs separated by commas, e.g. 768P=5000, 2K=12000`);
      return [name, Number(value)] as const;
    });
  return entries.length ? Object.fromEntries(entries) : undefined;
}

function PriceForm(props: { model?: string; price?: ModelPrice; onSaved: (table: PriceTable) => void; onCancel?: () => void }) {
  const [model, setModel] = useState(props.model ?? '');
  const [unit, setUnit] = useState(props.price?.unit ?? 'image');
  const [price, setPrice] = useState(String(props.price?.price ?? ''));
  const [tiers, setTiers] = useState(pairsText(props.price?.tiers));
  const [extras, setExtras] = useState(pairsText(props.price?.extras));
  const form = useSubmit(async () => {
    const t = parsePairs('tiers', tiers);
    const x = parsePairs('extras', extras);
    const entry = { unit, price: Number(price), ...(t ? { tiers: t } : {}), ...(x ? { extras: x } : {}) };
    props.onSaved(await api<PriceTable>('PUT', '/api/pricing', { models: { [model.trim()]: entry } }));
    if (!props.model) {
      setModel('');
      setPrice('');
      setTiers('');
      setExtras('');
    }
  });
  return (
    <form class="inline-form" onSubmit={form.onSubmit}>
      {!props.model && (
        <label>
          Model
          <input required value={model} onInput={(e) => setModel(e.currentTarget.value)} />
        </label>
      )}
      <label>
        Per
        <select value={unit} onChange={(e) => setUnit(e.currentTarget.value)}>
          {UNITS.map((u) => (
            <option key={u} value={u}>
              {u}
            </option>
          ))}
        </select>
      </label>
      <label>
        Price
        <input required type="number" min={0} step={1} value={price} onInput={(e) => setPrice(e.currentTarget.value)} />
      </label>
      <label class="wide">
        Tiers
        <input value={tiers} onInput={(e) => setTiers(e.currentTarget.value)} placeholder="768P=5000, 2K=12000" />
      </label>
      <label>
        Extras
        <input value={extras} onInput={(e) => setExtras(e.currentTarget.value)} placeholder="audio=10000" />
      </label>
      <button type="submit" class="primary" disabled={form.busy}>
        {props.model ? 'Save' : 'Add price'}
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

function RatioRow(props: { group: string; permille: number; onSaved: (table: PriceTable) => void }) {
  const [value, setValue] = useState(String(props.permille));
  const form = useSubmit(async () => props.onSaved(await api<PriceTable>('PUT', '/api/pricing', { group_ratios: { [props.group]: Number(value) } })));
  return (
    <tr>
      <td>{props.group}</td>
      <td>
        <form class="row-form" onSubmit={form.onSubmit}>
          <input type="number" min={0} step={1} value={value} onInput={(e) => setValue(e.currentTarget.value)} aria-label={`ratio of ${props.group}`} />
          <span class="muted">‰ (×{(Number(value) / 1000).toFixed(3)})</span>
          <button type="submit" disabled={form.busy || value === String(props.permille)}>
            Save
          </button>
          <ActionButton
            label="Remove"
            kind="danger"
            confirm={`Remove the ratio of group "${props.group}"? Its prices become the list prices.`}
            action={async () => props.onSaved(await api<PriceTable>('PUT', '/api/pricing', { group_ratios: { [props.group]: null } }))}
          />
          <ErrorLine error={form.error} />
        </form>
      </td>
    </tr>
  );
}

export function AdminPricesPage() {
  const table = useLoad(() => get<PriceTable>('/api/pricing'));
  const [editing, setEditing] = useState<string | undefined>(undefined);
  const [group, setGroup] = useState('');
  const [ratio, setRatio] = useState('1000');
  const saved = () => {
    setEditing(undefined);
    table.reload();
  };
  const addRatio = useSubmit(async () => {
    await api('PUT', '/api/pricing', { group_ratios: { [group.trim()]: Number(ratio) } });
    setGroup('');
    table.reload();
  });
  const models = Object.entries(table.value?.models ?? {}).sort(([a], [b]) => a.localeCompare(b));
  return (
    <>
      <Card title="Model prices" actions={<span class="muted">quota units per unit, before group ratios</span>}>
        <ErrorLine error={table.error} />
        <table data-testid="admin-prices-table">
          <thead>
            <tr>
              <th>Model</th>
              <th>Per</th>
              <th class="num">Price</th>
              <th>Tiers</th>
              <th>Extras</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {models.map(([name, p]) => [
              <tr key={name}>
                <td>{name}</td>
                <td>{p.unit}</td>
                <td class="num">{quota(p.price)}</td>
                <td>{pairsText(p.tiers)}</td>
                <td>{pairsText(p.extras)}</td>
                <td class="row-actions">
                  <button type="button" onClick={() => setEditing(editing === name ? undefined : name)}>
                    Edit
                  </button>
                  <ActionButton
                    label="Remove"
                    kind="danger"
                    confirm={`Remove the price of ${name}? Unpriced models are refused (model_not_priced).`}
                    action={async () => {
                      await api('PUT', '/api/pricing', { models: { [name]: null } });
                      table.reload();
                    }}
                  />
                </td>
              </tr>,
              editing === name && (
                <tr key={`${name}-edit`} class="detail-row">
                  <td colSpan={6}>
                    <PriceForm model={name} price={p} onSaved={saved} onCancel={() => setEditing(undefined)} />
                  </td>
                </tr>
              ),
            ])}
          </tbody>
        </table>
        <h3>Add a price</h3>
        <PriceForm onSaved={saved} />
      </Card>
      <Card title="Group ratios" actions={<span class="muted">permille: 1000 = list price</span>}>
        <table>
          <tbody>
            {Object.entries(table.value?.group_ratios ?? {}).map(([g, permille]) => (
              <RatioRow key={`${g}:${permille}`} group={g} permille={permille} onSaved={saved} />
            ))}
          </tbody>
        </table>
        <form class="inline-form" onSubmit={addRatio.onSubmit}>
          <label>
            Group
            <input required value={group} onInput={(e) => setGroup(e.currentTarget.value)} />
          </label>
          <label>
            Ratio (‰)
            <input required type="number" min={0} step={1} value={ratio} onInput={(e) => setRatio(e.currentTarget.value)} />
          </label>
          <button type="submit" class="primary" disabled={addRatio.busy}>
            Set ratio
          </button>
          <ErrorLine error={addRatio.error} />
        </form>
      </Card>
    </>
  );
}
