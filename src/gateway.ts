/**
 * The composition root: picks adapters from configuration, starts projections, seeds an
 * empty store, builds the HTTP server and the process managers. `npm start` and the tests
 * both come through here, so the tests exercise exactly what runs.
 */
import { makeDirectorySync } from './lib/sync-directory.js';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { sharedEventLog, sharedViews, type Config } from './config.js';
import { loadBootstrapFile, seedAdmin, seedChannelsAndPrices, simulatorSeed, type BootstrapFile } from './bootstrap/seed.js';
import { isSimulatorChannel, simulatorMount, type SimulatorMount } from './bootstrap/simulator-mount.js';
import { createAccountService } from './engine/accounts/account-service.js';
import { createCatalog, type Catalog } from './engine/channels/catalog.js';
import { createReconciler } from './engine/upkeep/reconciler.js';
import { startAll, stopAll, type BackgroundProcess } from './lib/background.js';
import { periodicProcess } from './engine/upkeep/periodic.js';
import { createChannelHealth } from './engine/channels/channel-health.js';
import { createChannelHealthCheck } from './engine/channels/channel-health-check.js';
import { channelKeysNotice, loadChannelKeys } from './engine/channels/channel-key-secret.js';
import { projectionProcess } from '../projections/process.js';
import { createProjectorGroup } from '../projections/projector-group.js';
import { createAssetSigner, loadSigningSecret, MAX_DOWNLOAD_BYTES } from './engine/media/assets.js';
import { callbackPolicy, checkOutboundUrl, outboundPolicy } from './engine/outbound/outbound-guard.js';
import { createTaskEngine, type TaskEngine } from './engine/dispatch/task-engine.js';
import { composeFamilies, families } from './families/index.js';
import type { FamilyModule } from './families/family.js';
import { modelCatalogOf } from './bootstrap/model-catalog.js';
import { createCallbackService, type CallbackService } from './engine/outbound/callback-service.js';
import { createPublisher } from './engine/outbound/publisher.js';
import { createOwnership } from './engine/dispatch/ownership.js';
import type { Processor } from './engine/upkeep/processor.js';
import { assetRoutes } from './http/assets.js';
import { createTokenCache } from './http/auth/token-cache.js';
import type { GatewayDeps } from './http/deps.js';
import { buildHealthServer, buildServer, type RoutePlugin } from './http/server.js';
import { selectAdapters } from './adapters/select.js';
import { createCheckpointFollower } from '../projections/follower.js';
import { waitForProjectedHead } from '../projections/head.js';
import type { EventStore } from './ports/event-store.js';
import type { ViewStore } from './ports/view-store.js';
import { coreProjections } from '../projections/index.js';
import { VIEWS } from '../projections/views.js';
import type { Projection } from '../projections/projection.js';
import type { SimFamily } from './simulator/context.js';
import { createProjectionRunner } from '../projections/runner.js';
import { createLogger } from './logger.js';
import { withViewCache } from '../projections/view-cache.js';
import { withFollowerViewCache } from '../projections/follower-view-cache.js';
import { createGatewayMetrics } from './metrics/registry.js';
import { eventMetricsProcess } from './metrics/event-metrics.js';
import { instrumentUpstreams } from './metrics/upstream-metrics.js';
import { registerStateGauges } from './metrics/state-gauges.js';
import { serverCloser } from './lib/close-server.js';

export interface Gateway {
  app: FastifyInstance;
  engine: TaskEngine;
  callbacks: CallbackService;
  /** Task and billing events onto the bus topics: only where the bus is Kafka (others read the event store). */
  publisher: Processor | undefined;
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
  /** Wraps the view store every reader and the projection runner use (a lagging view in tests). */
  wrapViewStore?: (store: ViewStore) => ViewStore;
  extraRoutes?: readonly RoutePlugin[];
  extraProjections?: readonly Projection[];
  /**
   * Families after the built-in ones (src/families/index.ts), composed with them in one list:
   * routes, views, upstream adapters, callback bodies, and the catalog the embedded default seeds.
   */
  extraFamilies?: readonly FamilyModule[];
  /** Their simulated upstreams, mounted after the built-in ones (src/simulator/families/index.ts) when the simulator is. */
  extraSimulatorFamilies?: readonly SimFamily[];
  /** Interval of the request summary log line; a minute by default (tests shorten it). */
  requestSummaryMs?: number;
}

/** Where the built-in simulator lives, relative to the gateway itself (see docs/decisions/0008-simulator-channels-at-sim.md). */
export const SIMULATOR_BASE_URL = '/_sim';

/** Whether this start mounts the simulator (bootstrap/simulator-mount.ts), said in one line; a warning for channels left pointing at it. */
function decideSimulatorMount(config: Config, catalog: Catalog, bootstrap: BootstrapFile | undefined, log: Logger): SimulatorMount {
  const stored = [...catalog.channels(), ...catalog.unreadable().map((u) => u.channel)].map((c) => ({ id: c.channelId, baseUrl: c.baseUrl }));
  const configured = [...(bootstrap?.channels ?? []), ...stored];
  const mount = simulatorMount(config, configured, SIMULATOR_BASE_URL);
  log.info(
    { simulator: mount.mounted, why: mount.why },
    mount.mounted ? `the built-in simulator is mounted at ${SIMULATOR_BASE_URL}` : 'the built-in simulator is not mounted',
  );
  const orphans = stored.filter((c) => isSimulatorChannel(c, SIMULATOR_BASE_URL));
  if (!mount.mounted && !config.simulatorUrl && orphans.length > 0)
    log.warn(
      { channels: orphans.map((c) => c.id) },
      `${orphans.length} channel(s) call the built-in simulator (${SIMULATOR_BASE_URL}), which is not mounted: their calls fail until they are disabled or SIMULATOR=1`,
    );
  return mount;
}

export async function createGateway(config: Config, options: GatewayOptions = {}): Promise<Gateway> {
  const log = options.log ?? createLogger(config);
  const allFamilies = [...families, ...(options.extraFamilies ?? [])];
  const composed = composeFamilies(allFamilies);
  const clock = options.clock ?? (() => new Date());
  makeDirectorySync(config.dataDir);
  // Before any store is opened: a secret that cannot be read stops the start with nothing open.
  const channelKeys = loadChannelKeys(config);
  const channelKeysLine = channelKeysNotice(channelKeys);
  if (channelKeysLine) log[channelKeysLine.level](channelKeysLine.message);

  const adapters = await selectAdapters(config);
  const events = options.wrapEventStore ? options.wrapEventStore(adapters.events) : adapters.events;
  const { bus, assets } = adapters;
  // Process roles: `all` (the embedded default) runs everything; the distributed deployment
  // splits HTTP (`api`), process managers (`worker`) and projections + publisher (`projector`).
  // On Kafka the projectors are a group that shares the projections and fails over
  // (projections/projector-group.ts): each folds the shards it owns, and otherwise reads the
  // views' checkpoints like an api; elsewhere the one that runs folds them all.
  const partitioned = Boolean(config.kafkaBrokers);
  const projectsInShards = config.role === 'projector' && partitioned;
  const runsProjections = config.role === 'all' || config.role === 'engine' || (config.role === 'projector' && !partitioned);
  const runsEngine = config.role === 'all' || config.role === 'worker' || config.role === 'engine';
  const servesApi = config.role === 'all' || config.role === 'api';
  // Task views polled from memory: kept current by this process's own commits where it projects
  // (projections/view-cache.ts); by the event log where the embedded engine process projects
  // for it (projections/follower-view-cache.ts). The distributed api reads the view store.
  const followsEmbeddedEngine = config.role === 'api' && !sharedEventLog(config) && !sharedViews(config);
  // It also learns there what changed in the views its caches of keys, users, channels and prices read.
  const watchedViews: readonly string[] = [VIEWS.tokens, VIEWS.users, VIEWS.channels, VIEWS.pricing];
  const followerCache = followsEmbeddedEngine
    ? withFollowerViewCache(adapters.views, events, { cached: composed.projections, watched: coreProjections.filter((p) => watchedViews.includes(p.view)) })
    : undefined;
  // Where nothing tells of the views' changes, what is kept of them is trusted for this long.
  const unwatchedRefreshMs = runsProjections || followerCache ? undefined : 2000;
  const cachedViews = runsProjections
    ? withViewCache(
        adapters.views,
        composed.projections.map((p) => p.view),
      )
    : (followerCache ?? adapters.views);
  const views = options.wrapViewStore ? options.wrapViewStore(cachedViews) : cachedViews;

  const projections = [...coreProjections, ...composed.projections, ...(options.extraProjections ?? [])];
  const runner = runsProjections
    ? createProjectionRunner({ events, views, projections, log: log.child({ processor: 'projections' }) })
    : createCheckpointFollower(
        views,
        projections,
        // The cache answers at most one look behind the engine's commits: look as often as the log is read.
        followerCache ? { refreshMs: config.eventPollIntervalMs, beforeAdvance: followerCache.invalidate, finalEventLags: followerCache.finalEventLags } : {},
      );
  await runner.start();
  if (runsProjections) await waitForProjectedHead(events, runner, 120_000);
  const catalog = await createCatalog(views, runner, unwatchedRefreshMs, {
    keys: channelKeys.cipher,
    log: log.child({ processor: 'catalog' }),
  });
  const accounts = createAccountService({ events, log: log.child({ processor: 'accounts' }) });
  const tokens = createTokenCache(views, runner, unwatchedRefreshMs === undefined ? {} : { ttlMs: unwatchedRefreshMs });
  // Known once the server listens: the address the engine calls itself at (simulator
  // channels), and the base of asset URLs unless PUBLIC_BASE_URL says otherwise.
  let selfUrl = `http://127.0.0.1:${config.port}`;
  const publicBaseUrl = () => config.publicBaseUrl?.replace(/\/+$/, '') ?? selfUrl;
  const signer = createAssetSigner(loadSigningSecret(config.assetSigningSecret, config.dataDir), publicBaseUrl);
  // Circuit breakers per channel, this process's own view (docs/decisions/0097-circuit-breaker-per-channel.md).
  const channelHealth = createChannelHealth({
    failures: config.channelBreakerFailures,
    halfOpenAfterMs: config.channelBreakerHalfOpenMs,
    log: log.child({ processor: 'channel-health' }),
    clock,
  });
  // Prometheus instruments, one registry per instance; none without METRICS_TOKEN (docs/decisions/0092-prometheus-metrics.md).
  const metrics = config.metricsToken ? createGatewayMetrics(config) : undefined;
  // The role's background processes: filled below, reported by /readyz.
  let background: readonly BackgroundProcess[] = [];
  const deps: GatewayDeps = {
    config,
    log,
    events,
    views,
    assets,
    bus,
    runner,
    catalog,
    accounts,
    tokens,
    channelKeys: channelKeys.cipher,
    signer,
    clock,
    selfUrl: () => config.simulatorUrl ?? selfUrl,
    backgroundProcesses: () => background,
    channelHealth,
    metrics,
  };

  const metadata = { at: clock().toISOString(), correlationId: 'bootstrap' };
  const generatedAdminPassword = servesApi ? await seedAdmin(deps, metadata) : undefined;
  const bootstrap = servesApi && config.bootstrapFile ? await loadBootstrapFile(config.bootstrapFile) : undefined;
  // Only where the API is served; decided before seeding, which seeds its channels when it is mounted.
  const simulatorMounted = servesApi && decideSimulatorMount(config, catalog, bootstrap, log).mounted;
  if (bootstrap) await seedChannelsAndPrices(deps, bootstrap, metadata);
  else if (simulatorMounted) await seedChannelsAndPrices(deps, simulatorSeed(SIMULATOR_BASE_URL, modelCatalogOf(allFamilies)), metadata);

  const simulator: RoutePlugin = () => async (sim) => {
    sim.addHook('onRoute', (route) => {
      route.schema = { ...route.schema, hide: true };
    });
    // Loaded only when it is mounted: the simulator is no part of a production gateway.
    const { simulatorPlugin } = await import('./simulator/plugin.js');
    await sim.register(simulatorPlugin, {
      prefix: '/_sim',
      stepMs: config.simStepMs,
      assetRetentionMs: config.assetRetentionSeconds * 1000,
      extraFamilies: options.extraSimulatorFamilies ?? [],
    });
  };
  const logOptions = options.requestSummaryMs !== undefined ? { requestSummaryMs: options.requestSummaryMs } : {};
  const app = servesApi
    ? await buildServer(
        deps,
        [(d) => assetRoutes({ ...d, signer }), ...composed.routes, ...(simulatorMounted ? [simulator] : []), ...(options.extraRoutes ?? [])],
        logOptions,
      )
    : await buildHealthServer(deps, logOptions);
  const closeServer = serverCloser(app);
  const ownership = createOwnership(bus);
  // On Kafka several workers split the tasks by partition: each settles, expires and reconciles
  // its own partitions' (docs/decisions/0124-work-scoped-to-owned-partitions.md). The embedded bus
  // admits one process, which does all of it with one checkpoint per processor, as before.
  const callbacks = createCallbackService({
    ...deps,
    // Nobody outside this process reads an in-process bus: nothing is published to it, and
    // callbacks are scheduled from the event store (docs/decisions/0144-one-durable-copy-of-each-event.md).
    scheduleFrom: partitioned ? 'bus' : 'log',
    owns: (taskId) => ownership.owns(taskId),
    bodies: composed.callbackBodies(deps),
    retryScheduleSeconds: config.callbackRetryScheduleSeconds,
    timeoutMs: config.callbackTimeoutMs,
    checkMs: config.callbackCheckMs,
    // Callbacks trust no origin: private, loopback and metadata targets are refused, except
    // what CALLBACK_ALLOWED_DESTINATIONS allows (and loopback with ALLOW_LOOPBACK_OUTBOUND, tests).
    checkUrl: (url) => checkOutboundUrl(url, callbackPolicy(config)),
    viewsReach: (position) => runner.waitFor(position),
  });
  const publisher = partitioned ? createPublisher(deps) : undefined;
  const engine = createTaskEngine({
    ...deps,
    upstreams: instrumentUpstreams(new Map(composed.upstreams.map((a) => [a.family, a])), metrics),
    log,
    assetRetentionSeconds: config.assetRetentionSeconds,
    channelConcurrency: config.channelConcurrency,
    ...(config.pollIntervalMs !== undefined ? { pollIntervalMs: config.pollIntervalMs } : {}),
    ...(config.taskMaxAgeSeconds !== undefined ? { maxAgeSeconds: config.taskMaxAgeSeconds } : {}),
    ownership,
    partitioned,
    // The embedded bus admits one process per data directory (split roles need Kafka), so the
    // engine that starts on it replaces the one before it: it takes over that one's submit leases.
    ...(config.kafkaBrokers ? {} : { instanceId: 'embedded' }),
    viewsReachHead: () => waitForProjectedHead(events, runner, 120_000),
    outbound: (channelBaseUrl) => outboundPolicy(config, deps.selfUrl(), [channelBaseUrl], { maxBytes: MAX_DOWNLOAD_BYTES }),
  });
  const reconciler = createReconciler({
    ...deps,
    log: log.child({ processor: 'reconciler' }),
    graceSeconds: config.reservationGraceSeconds,
    ...(partitioned ? { owns: (taskId: string) => ownership.owns(taskId) } : {}),
    ...(config.taskMaxAgeSeconds !== undefined ? { syncMaxAgeSeconds: config.taskMaxAgeSeconds } : {}),
  });
  const projectionsProcess = runsProjections ? projectionProcess(events, runner, clock) : undefined;
  const channelHealthCheck = createChannelHealthCheck({
    catalog,
    health: channelHealth,
    // The adapters themselves, not the engine's: a health check is no task traffic.
    upstreams: new Map(composed.upstreams.map((a) => [a.family, a])),
    selfUrl: deps.selfUrl,
    log: log.child({ processor: 'channel-health' }),
  });
  if (metrics)
    registerStateGauges(metrics, {
      events,
      views,
      runner,
      poller: runsEngine ? engine.poller : undefined,
      submitWindow: runsEngine ? () => engine.submitWindow() : undefined,
      channelHealth,
      channelName: (id) => catalog.channel(id)?.name,
      inflightView: runsProjections || projectsInShards,
      log,
    });

  // Counters derived from the event log: made only where the projections run (once per deployment).
  const eventMetrics =
    metrics && (runsProjections || projectsInShards) ? eventMetricsProcess({ events, metrics, clock, log: log.child({ processor: 'metrics' }) }) : undefined;
  const projectorGroup = projectsInShards
    ? createProjectorGroup({
        bus,
        events,
        projections,
        runnerFor: (owned) => createProjectionRunner({ events, views, projections: owned, log: log.child({ processor: 'projections' }) }),
        // Once per deployment, wherever their shard is.
        singletons: [...(publisher ? [publisher] : []), ...(eventMetrics ? [eventMetrics] : [])],
        log: log.child({ processor: 'projector-group' }),
        clock,
      })
    : undefined;

  // THE list of what each role runs in the background, in start order (stopped in reverse).
  // Projections are not in it: they start before the server (read-your-writes) and stop after it.
  const processes: readonly BackgroundProcess[] = [
    ...(runsEngine
      ? [
          ...engine.processes,
          ...callbacks.processes,
          // Often enough that a reservation is released soon after its grace period ends.
          periodicProcess(reconciler, Math.max(500, Math.min(30_000, config.reservationGraceSeconds * 250))),
          ...(config.channelHealthIntervalMs > 0 ? [periodicProcess(channelHealthCheck, config.channelHealthIntervalMs)] : []),
        ]
      : []),
    ...(runsProjections && publisher ? [publisher] : []),
    ...(runsProjections && eventMetrics ? [eventMetrics] : []),
    ...(projectorGroup ? [projectorGroup] : []),
  ];
  background = projectionsProcess ? [projectionsProcess, ...processes] : processes;

  let closed = false;
  return {
    app,
    deps,
    ...(generatedAdminPassword ? { generatedAdminPassword } : {}),
    engine,
    callbacks,
    publisher,
    async listen() {
      const address = await app.listen({ host: config.host, port: config.port });
      const port = new URL(address).port;
      selfUrl = `http://127.0.0.1:${port}`;
      if (!config.publicBaseUrl && !['0.0.0.0', '::'].includes(config.host)) selfUrl = address;
      await projectionsProcess?.start();
      await startAll(processes);
      return address;
    },
    async close() {
      if (closed) return;
      closed = true;
      // Process managers first (their upstream calls may be to this server's own simulator),
      // then the server, then the projections that in-flight requests may still wait for.
      await stopAll(processes);
      await closeServer(config.shutdownGraceMs);
      if (projectionsProcess) await projectionsProcess.stop();
      else await runner.stop();
      catalog.close();
      tokens.close();
      await Promise.allSettled([events.close(), views.close(), bus.close(), assets.close()]);
    },
  };
}
