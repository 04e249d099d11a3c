/**
 * The processes of a simulated deployment, each assembled as src/gateway.ts assembles its role,
 * from the engine's own modules, on the process's gated handles of the shared stores:
 *
 * - `projector`: the projection runner and the publisher (the `projector` role);
 * - `engine`: dispatcher, poller, settler, expirer, deadline sweeper and redispatcher
 *   (createTaskEngine), the callback scheduler and deliverer, and the reconciler (the `worker`
 *   role's list in docs/decisions/0019-background-processes-per-role.md, less the channel health check, which needs no money);
 * - `api`: what a submit request runs (submitTask), without HTTP.
 */
import pino from 'pino';
import { coreProjections } from '../projections/index.js';
import { imageTaskProjection } from '../src/families/images/view.js';
import { createCheckpointFollower } from '../projections/follower.js';
import { waitForProjectedHead } from '../projections/head.js';
import { createProjectionRunner, type ProjectionRunner } from '../projections/runner.js';
import type { Projection } from '../projections/projection.js';
import { loadConfig } from '../src/config.js';
import { createAccountService, type AccountService } from '../src/engine/accounts/account-service.js';
import { createAssetSigner } from '../src/engine/media/assets.js';
import { startAll, type BackgroundProcess } from '../src/lib/background.js';
import { createCallbackConsumer } from '../src/engine/outbound/callback-consumer.js';
import { createCallbackDeliverer, type CallbackBody } from '../src/engine/outbound/callbacks.js';
import { taskViewFromEvents } from '../src/engine/tasks/task-view.js';
import { createCatalog, type Catalog } from '../src/engine/channels/catalog.js';
import { createOwnership } from '../src/engine/dispatch/ownership.js';
import { periodicProcess } from '../src/engine/upkeep/periodic.js';
import { createPublisher } from '../src/engine/outbound/publisher.js';
import { createReconciler } from '../src/engine/upkeep/reconciler.js';
import type { RequestDeps } from '../src/engine/tasks/request-deps.js';
import { createTaskEngine } from '../src/engine/dispatch/task-engine.js';
import type { Bus } from '../src/ports/bus.js';
import type { EventStore } from '../src/ports/event-store.js';
import type { ViewStore } from '../src/ports/view-store.js';
import type { AssetStore } from '../src/ports/asset-store.js';
import type { SimNode } from './node.js';
import { nodeAssetStore, nodeEventStore, nodeViewStore, type FaultDeps } from './ports.js';
import { simUpstreamAdapter, type SimVendor } from './sim-upstream.js';

export const PROJECTIONS: readonly Projection[] = [...coreProjections, imageTaskProjection];

/** What every process of a world shares: the stores, the bus, the vendors, the receiver. */
export interface Shared {
  store: EventStore;
  views: ViewStore;
  assets: AssetStore;
  bus: { forNode(node: SimNode): Bus };
  vendors: ReadonlyMap<string, SimVendor>;
  faultDeps(node: SimNode): FaultDeps;
  /** The callback receiver as `node` reaches it: resolves with the HTTP status it answered. */
  post(node: SimNode, url: string, body: string, headers: Readonly<Record<string, string>>): Promise<number>;
  maxAgeSeconds: number;
  /** How often the engine polls an upstream job. */
  pollIntervalMs: number;
  reservationGraceSeconds: number;
  callbackRetryScheduleSeconds: readonly number[];
}

export interface SimProcess {
  node: SimNode;
  role: 'projector' | 'engine' | 'api';
  processes: readonly BackgroundProcess[];
}

const silent = pino({ level: 'silent' });
const SELF_URL = 'http://gateway.sim.invalid';
const signerFor = () => createAssetSigner('simulation-signing-secret', () => SELF_URL);

interface Handles {
  events: EventStore;
  views: ViewStore;
  assets: AssetStore;
  bus: Bus;
}

function handles(shared: Shared, node: SimNode): Handles {
  return {
    events: nodeEventStore(shared.store, shared.faultDeps(node)),
    views: nodeViewStore(shared.views, node),
    assets: nodeAssetStore(shared.assets, node),
    bus: shared.bus.forNode(node),
  };
}

export async function startProjector(shared: Shared, node: SimNode): Promise<SimProcess & { runner: ProjectionRunner }> {
  const h = handles(shared, node);
  const runner = createProjectionRunner({ events: h.events, views: h.views, projections: PROJECTIONS, log: silent });
  const publisher = createPublisher({ events: h.events, views: h.views, bus: h.bus, clock: node.clock, log: silent });
  await runner.start();
  await publisher.start();
  return { node, role: 'projector', processes: [publisher], runner };
}

/** The catalog and read-your-writes of a process that follows the projector. */
async function follow(h: Handles): Promise<{ follower: ProjectionRunner; catalog: Catalog }> {
  // Looks at the checkpoints every 250 ms while waiting (the default's 25 ms costs ten times the steps for the same outcome).
  const follower = createCheckpointFollower(h.views, PROJECTIONS, { everyMs: 250 });
  await follower.start();
  const catalog = await createCatalog(h.views, follower, 2000, { log: silent });
  return { follower, catalog };
}

/** The callback body: the image family's view folded from the events that scheduled it, signed as a query signs it. */
const imageBody: CallbackBody = async (events, taskId, accountId) =>
  taskViewFromEvents({ signer: signerFor() }, imageTaskProjection, events, taskId, accountId)?.body;

export async function startEngine(shared: Shared, node: SimNode): Promise<SimProcess & { accounts: AccountService }> {
  const h = handles(shared, node);
  const { follower, catalog } = await follow(h);
  const accounts = createAccountService({ events: h.events, log: silent });
  const ownership = createOwnership(h.bus);
  const engine = createTaskEngine({
    events: h.events,
    views: h.views,
    assets: h.assets,
    accounts,
    catalog,
    signer: signerFor(),
    upstreams: new Map([['images', simUpstreamAdapter(shared.vendors, node, shared.maxAgeSeconds, shared.pollIntervalMs)]]),
    log: silent,
    clock: node.clock,
    selfUrl: () => SELF_URL,
    assetRetentionSeconds: 7200,
    channelConcurrency: 64,
    maxAgeSeconds: shared.maxAgeSeconds,
    // Slower than the embedded default's second: each pass scans a view (EXPIRY_CHECK_MS).
    expiryCheckMs: 10_000,
    ownership,
    // Several engines split the tasks by bus partition, as on Kafka: a checkpoint per partition.
    partitioned: true,
    outbound: () => ({ allowLoopback: false, trustedOrigins: [], maxBytes: 1 << 20, timeoutMs: 30_000, maxRedirects: 0 }),
    viewsReachHead: () => waitForProjectedHead(h.events, follower, 120_000),
  });
  const scheduler = createCallbackConsumer({ bus: h.bus, events: h.events, clock: node.clock, log: silent });
  const deliverer = createCallbackDeliverer({
    events: h.events,
    views: h.views,
    log: silent,
    clock: node.clock,
    bodies: new Map([['image', imageBody]]),
    retryScheduleSeconds: shared.callbackRetryScheduleSeconds,
    timeoutMs: 10_000,
    checkUrl: async () => undefined,
    post: (url, body, headers) => shared.post(node, url, body, headers),
    viewsReach: (position) => follower.waitFor(position),
    owns: (taskId) => ownership.owns(taskId),
  });
  const reconciler = createReconciler({
    events: h.events,
    views: h.views,
    accounts,
    log: silent,
    graceSeconds: shared.reservationGraceSeconds,
    clock: node.clock,
    // As src/gateway.ts where instances split the work: each reservation has one reconciler.
    owns: (taskId) => ownership.owns(taskId),
  });
  // Intervals as a deployment may set them (CALLBACK_CHECK_MS; the reconciler's is a quarter of its grace).
  const processes = [...engine.processes, scheduler, periodicProcess(deliverer, 5000), periodicProcess(reconciler, 15_000)];
  await startAll(processes);
  return { node, role: 'engine', processes, accounts };
}

export interface ApiProcess extends SimProcess {
  deps: RequestDeps;
}

export async function startApi(shared: Shared, node: SimNode): Promise<ApiProcess> {
  const h = handles(shared, node);
  const { catalog } = await follow(h);
  const accounts = createAccountService({ events: h.events, log: silent });
  const deps: RequestDeps = {
    config: loadConfig({}, { dataDir: '/nonexistent/simulation' }),
    log: silent,
    events: h.events,
    views: h.views,
    assets: h.assets,
    catalog,
    accounts,
    signer: signerFor(),
    selfUrl: () => SELF_URL,
    clock: node.clock,
  };
  return { node, role: 'api', processes: [], deps };
}
