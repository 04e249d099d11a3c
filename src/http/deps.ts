import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { AssetStore } from '../ports/asset-store.js';
import type { Bus } from '../ports/bus.js';
import type { EventStore } from '../ports/event-store.js';
import type { ViewStore } from '../ports/view-store.js';
import type { ProjectionRunner } from '../../projections/runner.js';
import type { Catalog } from '../engine/catalog.js';
import type { AccountService } from '../engine/account-service.js';
import type { TokenCache } from './auth/token-cache.js';
import type { AssetSigner } from '../engine/assets.js';
import type { BackgroundProcess } from '../engine/background.js';

/** Everything the HTTP layer needs, built once by the composition root (src/gateway.ts). */
export interface GatewayDeps {
  config: Config;
  log: Logger;
  events: EventStore;
  views: ViewStore;
  assets: AssetStore;
  bus: Bus;
  runner: ProjectionRunner;
  catalog: Catalog;
  accounts: AccountService;
  tokens: TokenCache;
  signer: AssetSigner;
  /** The address this gateway calls itself at (known once it listens). */
  selfUrl: () => string;
  /** Injected so tests can move time; never call Date.now() in request logic. */
  clock: () => Date;
  /** This role's background processes (reported by /readyz). */
  backgroundProcesses: () => readonly BackgroundProcess[];
}
