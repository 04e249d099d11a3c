/**
 * In-memory copy of the channel and price views, refreshed when their projections commit.
 * The hot paths (auth, submit, dispatch) read it instead of the view store.
 */
import type { PriceTable } from '../domain/events.js';
import type { ViewStore } from '../ports/view-store.js';
import type { ChannelDoc } from '../../projections/channels.js';
import { PRICING_DOC_ID } from '../../projections/pricing.js';
import type { ProjectionRunner } from '../../projections/runner.js';

export interface Catalog {
  channels(): readonly ChannelDoc[];
  channel(id: string): ChannelDoc | undefined;
  prices(): PriceTable;
  /** Enabled channels that serve `model` to `group` (of one upstream family), best priority first. */
  channelsFor(model: string, group: string, family?: string): ChannelDoc[];
  /** Models that have an enabled channel for the group and a price. */
  modelsFor(group: string): string[];
  refresh(): Promise<void>;
  close(): void;
}

const emptyPrices: PriceTable = { models: {}, groupRatios: {} };

/** `refreshEveryMs`: for processes that do not run the projections and so see no commits. */
export async function createCatalog(views: ViewStore, runner?: ProjectionRunner, refreshEveryMs?: number): Promise<Catalog> {
  let channels: ChannelDoc[] = [];
  let prices: PriceTable = emptyPrices;
  let byId = new Map<string, ChannelDoc>();

  async function refresh(): Promise<void> {
    const docs = await views.find<ChannelDoc>('channels', {}, { limit: 100_000 });
    channels = docs.map((d) => d.doc);
    byId = new Map(channels.map((c) => [c.channelId, c]));
    prices = (await views.get<PriceTable>('pricing', PRICING_DOC_ID))?.doc ?? emptyPrices;
  }
  await refresh();
  const unsubscribe = runner?.onCommit((writes) => {
    if (writes.some((w) => w.view === 'channels' || w.view === 'pricing')) void refresh();
  });
  const timer = refreshEveryMs ? setInterval(() => void refresh().catch(() => undefined), refreshEveryMs) : undefined;
  timer?.unref();

  const serves = (c: ChannelDoc, model: string, group: string): boolean =>
    c.status === 1 && c.models.includes(model) && (c.groups.length === 0 || c.groups.includes(group));

  return {
    channels: () => channels,
    channel: (id) => byId.get(id),
    prices: () => prices,
    channelsFor: (model, group, family) =>
      channels.filter((c) => serves(c, model, group) && (family === undefined || c.family === family)).sort((a, b) => b.priority - a.priority),
    modelsFor(group) {
      const models = new Set<string>();
      for (const c of channels) for (const m of c.models) if (serves(c, m, group) && prices.models[m]) models.add(m);
      return [...models].sort();
    },
    refresh,
    close: () => {
      unsubscribe?.();
      if (timer) clearInterval(timer);
    },
  };
}
