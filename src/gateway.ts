/**
 * The composition root: picks adapters from configuration, starts projections, seeds an
 * empty store, builds the HTTP server and the process managers. `npm start` and the tests
 * both come through here, so the tests exercise exactly what runs.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { pino, type Logger } from 'pino';
import type { Config } from './config.js';
import { createFsAssetStore } from './adapters/fs/asset-store.js';
import { createInprocBus } from './adapters/inproc/bus.js';
import { createSqliteEventStore } from './adapters/sqlite/event-store.js';
import { createSqliteViewStore } from './adapters/sqlite/view-store.js';
import { loadBootstrapFile, seedAdmin, seedChannelsAndPrices, simulatorSeed } from './bootstrap/seed.js';
import { createAccountService } from './engine/account-service.js';
import { createCatalog } from './engine/catalog.js';
import { createReconciler } from './engine/reconciler.js';
import { createTokenCache } from './http/auth/token-cache.js';
import type { GatewayDeps } from './http/deps.js';
import { buildServer, type RoutePlugin } from './http/server.js';
import type { EventStore } from './ports/event-store.js';
import { coreProjections } from '../projections/index.js';
import type { Projection } from '../projections/projection.js';
import { createProjectionRunner } from '../projections/runner.js';

export interface Gateway {
  app: FastifyInstance;
  deps: GatewayDeps;
  /** Listens on the configured host and port; resolves with the base URL. */
  listen(): Promise<string>;
  /** Closes the server, stops process managers and projections, closes adapters. */
  close(): Promise<void>;
  /** A generated admin password, when one was made up on this start (printed once by main). */
  generatedAdminPassword?: string;
}

export interface GatewayOptions {
  log?: Logger;
  clock?: () => Date;
  /** Wraps the event store (fault injection in reliability tests). */
  wrapEventStore?: (store: EventStore) => EventStore;
  extraRoutes?: readonly RoutePlugin[];
  extraProjections?: readonly Projection[];
}

/** Where the built-in simulator lives, relative to the gateway itself (see docs/decisions.md). */
export const SIMULATOR_BASE_URL = '/_sim';

export function createLogger(config: Config): Logger {
  return pino({
    level: config.logLevel,
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]', '*.password', '*.passwordHash', '*.key', '*.keyHash', 'headers.authorization'],
      censor: '[redacted]',
    },
  });
}

export async function createGateway(config: Config, options: GatewayOptions = {}): Promise<Gateway> {
  const log = options.log ?? createLogger(config);
  const clock = options.clock ?? (() => new Date());
  mkdirSync(config.dataDir, { recursive: true });

  const rawEvents = createSqliteEventStore({ path: join(config.dataDir, 'events.sqlite') });
  const events = options.wrapEventStore ? options.wrapEventStore(rawEvents) : rawEvents;
  const views = createSqliteViewStore({ path: join(config.dataDir, 'views.sqlite') });
  const bus = createInprocBus({ path: join(config.dataDir, 'bus.sqlite') });
  const assets = createFsAssetStore({ dir: join(config.dataDir, 'assets') });

  const runner = createProjectionRunner({ events, views, projections: [...coreProjections, ...(options.extraProjections ?? [])], log: log.child({ processor: 'projections' }) });
  await runner.start();
  await runner.waitFor(await events.headPosition(), 120_000);
  const catalog = await createCatalog(views, runner);
  const accounts = createAccountService({ events, log: log.child({ processor: 'accounts' }) });
  const tokens = createTokenCache(views, runner);
  const deps: GatewayDeps = { config, log, events, views, assets, bus, runner, catalog, accounts, tokens, clock };

  const metadata = { at: clock().toISOString(), correlationId: 'bootstrap' };
  const admin = await seedAdmin(deps, metadata);
  if (config.bootstrapFile) await seedChannelsAndPrices(deps, await loadBootstrapFile(config.bootstrapFile), metadata);
  else if (config.simulator) await seedChannelsAndPrices(deps, simulatorSeed(SIMULATOR_BASE_URL), metadata);

  const app = await buildServer(deps, options.extraRoutes ?? []);
  const reconciler = createReconciler({ ...deps, log: log.child({ processor: 'reconciler' }), graceSeconds: config.reservationGraceSeconds });
  reconciler.start();

  let closed = false;
  return {
    app,
    deps,
    ...(admin.generatedPassword ? { generatedAdminPassword: admin.generatedPassword } : {}),
    async listen() {
      const address = await app.listen({ host: config.host, port: config.port });
      return address;
    },
    async close() {
      if (closed) return;
      closed = true;
      await app.close();
      await reconciler.stop();
      await runner.stop();
      catalog.close();
      tokens.close();
      await Promise.allSettled([events.close(), views.close(), bus.close(), assets.close()]);
    },
  };
}
