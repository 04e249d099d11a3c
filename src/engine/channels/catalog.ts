/**
 * In-memory copy of the channel and price views, refreshed when their projections commit.
 * The hot paths (auth, submit, dispatch) read it instead of the view store. Channel keys are
 * decrypted here, in memory only (the view holds ciphertext); a channel whose key this process
 * cannot decrypt is never used, only listed for the administrator with the reason.
 */
import type { Logger } from 'pino';
import type { PriceTable } from '../../domain/events.js';
import type { ViewStore } from '../../ports/view-store.js';
import { ChannelKeyDecryptError, type ChannelKeyReader } from './channel-key-cipher.js';
import type { ChannelDoc } from '../../../projections/channels.js';
import { PRICING_DOC_ID } from '../../../projections/pricing.js';
import type { ProjectionRunner } from '../../../projections/runner.js';

/** A channel whose stored key cannot be decrypted here; `channel.key` is the stored ciphertext. */
export interface UnreadableChannel {
  channel: ChannelDoc;
  reason: string;
}

export interface Catalog {
  /** Channels with their keys in clear (memory only); unreadable ones are not among them. */
  channels(): readonly ChannelDoc[];
  channel(id: string): ChannelDoc | undefined;
  /** Channels never used because their key cannot be decrypted (missing secret, altered ciphertext). */
  unreadable(): readonly UnreadableChannel[];
  prices(): PriceTable;
  /** Enabled channels that serve `model` to `group` (of one upstream family), best priority first. */
  channelsFor(model: string, group: string, family?: string): ChannelDoc[];
  /** Models that have an enabled channel for the group and a price. */
  modelsFor(group: string): string[];
  refresh(): Promise<void>;
  close(): void;
}

const emptyPrices: PriceTable = { models: {}, groupRatios: {} };
/** How soon a refresh after a change that failed is tried again. */
const CHANGE_RETRY_MS = 1000;

export interface CatalogKeys {
  /**
   * Decrypts stored channel keys. Without it keys stay as stored (ciphertext), for readers that
   * never call an upstream with them; the composition root always gives it.
   */
  keys?: ChannelKeyReader;
  /** Where an unreadable key (once per stored key) and a failed refresh are reported. */
  log?: Pick<Logger, 'error'>;
}

/** `refreshEveryMs`: for processes that do not run the projections and so see no commits. */
export async function createCatalog(
  views: ViewStore,
  runner?: Pick<ProjectionRunner, 'onCommit'>,
  refreshEveryMs?: number,
  options: CatalogKeys = {},
): Promise<Catalog> {
  const keys: ChannelKeyReader = options.keys ?? { decrypt: (stored) => stored };
  let channels: ChannelDoc[] = [];
  let unreadable: UnreadableChannel[] = [];
  let prices: PriceTable = emptyPrices;
  let byId = new Map<string, ChannelDoc>();
  // Stored key last reported per channel: a refresh runs on every channel commit, a report once.
  const reported = new Map<string, string>();

  function withClearKey(doc: ChannelDoc): ChannelDoc | UnreadableChannel {
    try {
      return { ...doc, key: keys.decrypt(doc.key) };
    } catch (err) {
      if (!(err instanceof ChannelKeyDecryptError)) throw err;
      if (reported.get(doc.channelId) !== doc.key) {
        reported.set(doc.channelId, doc.key);
        options.log?.error({ channelId: doc.channelId, keyId: err.keyId }, `channel ${doc.channelId} is not used: ${err.message}`);
      }
      return { channel: doc, reason: err.message };
    }
  }

  async function refresh(): Promise<void> {
    const docs = await views.find<ChannelDoc>('channels', {}, { limit: 100_000 });
    const read = docs.map((d) => withClearKey(d.doc));
    channels = read.filter((c): c is ChannelDoc => !('reason' in c));
    unreadable = read.filter((c): c is UnreadableChannel => 'reason' in c);
    byId = new Map(channels.map((c) => [c.channelId, c]));
    prices = (await views.get<PriceTable>('pricing', PRICING_DOC_ID))?.doc ?? emptyPrices;
  }
  await refresh();
  let closed = false;
  let retryTimer: NodeJS.Timeout | undefined;
  /**
   * A refresh set off by a commit that fails (the store did not answer) is tried again until one
   * succeeds: nothing else would read the change (a process without `refreshEveryMs` sees only
   * commits), and an unhandled rejection would end the process.
   */
  function refreshAfterChange(): void {
    clearTimeout(retryTimer);
    retryTimer = undefined;
    refresh().catch((err: unknown) => {
      if (closed) return;
      options.log?.error({ err }, `reading the channels and prices after a change failed; trying again in ${CHANGE_RETRY_MS} ms`);
      retryTimer ??= setTimeout(refreshAfterChange, CHANGE_RETRY_MS);
      retryTimer.unref();
    });
  }
  const unsubscribe = runner?.onCommit((writes) => {
    if (writes.some((w) => w.view === 'channels' || w.view === 'pricing')) refreshAfterChange();
  });
  const timer = refreshEveryMs ? setInterval(() => void refresh().catch(() => undefined), refreshEveryMs) : undefined;
  timer?.unref();

  const serves = (c: ChannelDoc, model: string, group: string): boolean =>
    c.status === 1 && c.models.includes(model) && (c.groups.length === 0 || c.groups.includes(group));

  return {
    channels: () => channels,
    channel: (id) => byId.get(id),
    unreadable: () => unreadable,
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
      closed = true;
      unsubscribe?.();
      if (timer) clearInterval(timer);
      clearTimeout(retryTimer);
    },
  };
}
