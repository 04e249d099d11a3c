/**
 * What the engine's request-time work (submits, synchronous calls, reading a task's view)
 * needs from the composition root: stores, the catalog, the account service, the asset signer,
 * configuration and a clock. The HTTP layer's dependencies (src/http/deps.ts) extend it, so a
 * route hands its own in; the engine never sees tokens, sessions or the bus.
 */
import type { Config } from '../../config.js';
import type { ViewStore } from '../../ports/view-store.js';
import type { AccountService } from '../accounts/account-service.js';
import type { AssetSigner } from '../media/assets.js';
import type { ChannelHealth } from '../channels/channel-health.js';
import type { EngineDeps } from '../engine-deps.js';

export interface RequestDeps extends EngineDeps {
  config: Config;
  views: ViewStore;
  accounts: AccountService;
  signer: AssetSigner;
  /** Circuit breakers per channel (this process's view); synchronous calls skip open channels. */
  channelHealth?: ChannelHealth;
}
