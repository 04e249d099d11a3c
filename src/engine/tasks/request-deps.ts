/**
 * What the engine's request-time work (submits, synchronous calls, reading a task's view)
 * needs from the composition root: stores, the catalog, the account service, the asset signer,
 * configuration and a clock. The HTTP layer's dependencies (src/http/deps.ts) extend it, so a
 * route hands its own in; the engine never sees tokens, sessions or the bus.
 */
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { AssetStore } from '../../ports/asset-store.js';
import type { EventStore } from '../../ports/event-store.js';
import type { ViewStore } from '../../ports/view-store.js';
import type { AccountService } from '../accounts/account-service.js';
import type { AssetSigner } from '../media/assets.js';
import type { Catalog } from '../channels/catalog.js';
import type { ChannelHealth } from '../channels/channel-health.js';

export interface RequestDeps {
  config: Config;
  log: Logger;
  events: EventStore;
  views: ViewStore;
  assets: AssetStore;
  catalog: Catalog;
  accounts: AccountService;
  signer: AssetSigner;
  /** The address this gateway calls itself at (known once it listens). */
  selfUrl: () => string;
  /** Injected so tests can move time; never call Date.now() in request logic. */
  clock: () => Date;
  /** Circuit breakers per channel (this process's view); synchronous calls skip open channels. */
  channelHealth?: ChannelHealth;
}
