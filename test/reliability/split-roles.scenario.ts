/**
 * The distributed deployment's roles as separate processes on one machine (issues 14, 26, 27):
 * api ×2, worker ×2 and projector ×2, on a real Kafka broker (KAFKA_BROKERS: ownership, the task-events
 * topic, callbacks) under a prefix of the run's own (KAFKA_PREFIX), wired as docker-compose.yml
 * wires them, over the stores a backend names (SplitRolesBackend: SQLite files shared in one
 * DATA_DIR, or PostgreSQL); the asset files are in the DATA_DIR every instance shares. The api
 * instances serve the simulator; every process reaches it through a counting tap
 * (test/support/upstream-tap.ts), so each upstream request is known with the process that made it.
 *
 * 1. Every family once: submit through one api, poll through both, settle, callback (loopback
 *    receiver, CALLBACK_ALLOWED_DESTINATIONS), assets downloaded through both apis, each answer's
 *    URLs on the answering api's own PUBLIC_BASE_URL.
 * 2. A worker stopped with SIGTERM, then (with a replacement started) one killed with SIGKILL:
 *    its in-flight tasks are followed by the other worker, tasks submitted meanwhile are
 *    dispatched by it; every task is submitted upstream once (tap and `UpstreamSubmitted`),
 *    finishes, and is settled once. The kill comes when no dispatch is under way: a crash in
 *    the middle of one may submit twice (docs/decisions/0028-task-work-follows-partitions.md).
 * 2a. The two projectors share the projections (each folds some, together all, the publisher in
 *    one); the one running the publisher is killed with SIGKILL under a load of hooked tasks,
 *    with some of its projections behind the head: the other takes all over, every task finishes,
 *    every callback arrives once, and every view equals one runner's rebuild from the log.
 * 3. Where the backend can crash its server (PostgreSQL): a crash and restart of it in the
 *    middle of a load of submits through both apis.
 *
 * Needs KAFKA_BROKERS (`bash scripts/kafka-local.sh start`); skipped with one line without it,
 * failed without it under REQUIRE_KAFKA=1.
 */
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { partitionForKey } from '../../src/adapters/inproc/murmur2.js';
import type { EventStore, RecordedEvent } from '../../src/ports/event-store.js';
import type { ViewStore } from '../../src/ports/view-store.js';
import type { DeliveredMessage } from '../../src/ports/bus.js';
import { createKafkaBus } from '../../src/adapters/kafka/bus.js';
import { BILLING_TOPIC, TASK_TOPIC, type EventEnvelope } from '../../src/engine/outbound/event-envelope.js';
import { freePort, startChildGateway, stopGateways, type ChildGateway } from '../support/child-gateway.js';
import { ADMIN_PASSWORD, Client, eventually, newToken, newUser } from '../support/gateway.js';
import { startReceiver } from '../support/receiver.js';
import { tempDir } from '../support/tmp.js';
import { startUpstreamTap, type UpstreamTap } from '../support/upstream-tap.js';
import { join } from 'node:path';
import { pino } from 'pino';
import { createSqliteViewStore } from '../../src/adapters/sqlite/view-store.js';
import { composeFamilies, families } from '../../src/families/index.js';
import { coreProjections } from '../../projections/index.js';
import { createCheckpointFollower } from '../../projections/follower.js';
import { waitForProjectedHead } from '../../projections/head.js';
import { createProjectionRunner } from '../../projections/runner.js';

const brokers = process.env.KAFKA_BROKERS?.trim();
const kafkaRequired = process.env.REQUIRE_KAFKA === '1';

/** The stores under the roles. */
export interface SplitRolesBackend {
  /** A short name, in the describe title and the run's KAFKA_PREFIX. */
  name: string;
  /** Why it cannot run here (skipped with that line), or undefined. */
  missing?: string;
  /** True when a skip must fail instead (REQUIRE_…=1). */
  required: boolean;
  /** Starts what the roles need (a server of the suite's own), before them. */
  start?(): Promise<void>;
  /** Settings every role gets beside Kafka's and the common ones. */
  env(): Record<string, string>;
  /** The stores as the test reads them (the events for the books, the views for checkpoints). */
  openEvents(dataDir: string): EventStore;
  openViews(dataDir: string): ViewStore;
  /** Crashes the store's server and starts it again after `downSeconds`, if the backend can. */
  crashRestart?(downSeconds: number): Promise<void>;
  /** After the roles stopped. */
  stop?(): Promise<void>;
}

const RUN = Date.now().toString(36);
/** The projections a gateway runs (src/gateway.ts), by name. */
const ALL_PROJECTIONS = [...coreProjections, ...composeFamilies(families).projections];
const PROJECTION_NAMES = ALL_PROJECTIONS.map((p) => p.name).sort();
/** How much later than the other roles the projector is started. */
const PROJECTOR_DELAY_MS = 11_000;
/** BUS_PARTITIONS: the default, the same for every process. */
const PARTITIONS = 16;
const COMMON = {
  ASSET_SIGNING_SECRET: 'split-roles-shared-asset-signing-secret',
  // Slow tasks ([sim:slow], 20 steps) run 5 s upstream: still running when a worker goes away.
  SIM_STEP_MS: '250',
  POLL_INTERVAL_MS: '50',
  CALLBACK_CHECK_MS: '100',
  CALLBACK_ALLOWED_DESTINATIONS: '127.0.0.0/8',
  // A reservation whose task never appeared (its submit cut off by a store crash) is released
  // after this, within the test's patience rather than the default 5 minutes.
  RESERVATION_GRACE_SECONDS: '10',
  LOG_LEVEL: 'warn',
};

interface Role {
  name: string;
  child: ChildGateway;
  /** Its PUBLIC_BASE_URL (api) or undefined. */
  base?: string;
  log: string[];
}

/** Every final state, for the tasks' queries: `ok` / `failed` / undefined while running. */
type Outcome = 'ok' | 'failed' | undefined;

interface Family {
  name: string;
  /** Submits through `api`; the task id. `marker` is in the prompt (the tap finds the upstream submit by it). */
  submit(api: Client, marker: string, hook: string): Promise<string>;
  query(id: string): string;
  outcome(body: unknown): Outcome;
  /** Asset URLs in the final answer (the Vid-H3 answer has none: its content route serves it). */
  urls(body: unknown): string[];
  content?(id: string): string;
  hooked: boolean;
}

/** The value at a dot path of a JSON body (`data.0.url`), or undefined. */
function at(value: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((v, k) => (v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined), value);
}
const text = (value: unknown, path: string): string => {
  const found = at(value, path);
  if (typeof found !== 'string') throw new Error(`no string at ${path} in ${JSON.stringify(value)}`);
  return found;
};
/** The strings at `field` of each item of the list at `path`. */
const texts = (value: unknown, path: string, field: string): string[] => {
  const list = at(value, path);
  return Array.isArray(list) ? list.map((item) => text(item, field)) : [];
};
/** `ok` / `failed` when the status at `path` is one of the two, else undefined. */
const outcomeAt =
  (path: string, succeeded: string, failed: string) =>
  (body: unknown): Outcome => {
    const status = at(body, path);
    return status === succeeded ? 'ok' : status === failed ? 'failed' : undefined;
  };

/** Promise.all that lets every start finish (so afterAll stops what did start) before failing. */
async function settleAll<T>(work: readonly Promise<T>[]): Promise<T[]> {
  const results = await Promise.allSettled(work);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return results.map((r) => (r as PromiseFulfilledResult<T>).value);
}

async function ok(reply: Promise<{ status: number; body: unknown }>): Promise<unknown> {
  const r = await reply;
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
}

const FAMILIES: Family[] = [
  {
    name: 'async images',
    submit: async (api, m) =>
      text(await ok(api.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt: `a fox ${m}`, n: 1, size: '832x1216' })), 'id'),
    query: (id) => `/v1/images/async/generations/${id}`,
    outcome: outcomeAt('status', 'completed', 'failed'),
    urls: (b) => texts(b, 'data', 'url'),
    hooked: false,
  },
  {
    name: 'vidgen',
    submit: async (api, m, hook) =>
      text(
        await ok(
          api.post('/v1/video/generations', {
            model: 'vendor-vidgen-2-5-260628',
            prompt: `a boat ${m}`,
            seconds: 4,
            metadata: { callback_url: hook, resolution: '480p' },
          }),
        ),
        'id',
      ),
    query: (id) => `/v1/video/generations/${id}`,
    outcome: outcomeAt('data.status', 'SUCCESS', 'FAILURE'),
    urls: (b) => [text(b, 'data.result_url')],
    hooked: true,
  },
  {
    name: 'Vid-H3',
    submit: async (api, m, hook) =>
      text(await ok(api.post('/v1/videos', { model: 'Vid-H3', prompt: `a lighthouse ${m}`, seconds: 4, metadata: { callback_url: hook } })), 'id'),
    query: (id) => `/v1/videos/${id}`,
    outcome: outcomeAt('status', 'completed', 'failed'),
    urls: () => [],
    content: (id) => `/v1/videos/${id}/content`,
    hooked: true,
  },
  {
    name: 'clip',
    submit: async (api, m) => text(await ok(api.post('/clip/v1/videos/text2video', { model_name: 'clip-v1', prompt: `a kite ${m}` })), 'data.task_id'),
    query: (id) => `/clip/v1/videos/text2video/${id}`,
    outcome: outcomeAt('data.task_status', 'succeed', 'failed'),
    urls: (b) => texts(b, 'data.task_result.videos', 'url'),
    hooked: false,
  },
  {
    name: 'motion',
    submit: async (api, m) =>
      text(
        await ok(api.post('/vendor/api/v1/services/aigc/video-generation/video-synthesis', { model: 'motion3.0-video', prompt: `waves ${m}`, duration: 4 })),
        'output.task_id',
      ),
    query: (id) => `/vendor/api/v1/tasks/${id}`,
    outcome: outcomeAt('output.task_status', 'SUCCEEDED', 'FAILED'),
    urls: (b) => [text(b, 'output.video_url')],
    hooked: false,
  },
  {
    name: 'tune',
    submit: async (api, m, hook) =>
      text(await ok(api.post('/tune/submit/MUSIC', { prompt: `[Verse] moon ${m}`, title: 'Moon', tags: 'folk', callback_url: hook })), 'data'),
    query: (id) => `/tune/fetch/${id}`,
    outcome: outcomeAt('data.status', 'SUCCESS', 'FAILURE'),
    urls: (b) => texts(b, 'data.data', 'audio_url'),
    hooked: true,
  },
  {
    name: 'art',
    submit: async (api, m, hook) => text(await ok(api.post('/art/submit/imagine', { prompt: `a castle ${m}`, notifyHook: hook })), 'result'),
    query: (id) => `/art/task/${id}/fetch`,
    outcome: outcomeAt('status', 'SUCCESS', 'FAILURE'),
    urls: (b) => [text(b, 'imageUrl')],
    hooked: true,
  },
];

/** Every string in a JSON value that is an asset URL of the gateway. */
function assetUrls(value: unknown): string[] {
  if (typeof value === 'string') return value.includes('/assets/') && /^https?:\/\//.test(value) ? [value] : [];
  if (Array.isArray(value)) return value.flatMap(assetUrls);
  if (value && typeof value === 'object') return Object.values(value).flatMap(assetUrls);
  return [];
}

async function download(url: string, headers: Record<string, string> = {}): Promise<Buffer> {
  const res = await fetch(url, { headers });
  const bytes = Buffer.from(await res.arrayBuffer());
  expect(res.status, `${url}: ${bytes.subarray(0, 200).toString()}`).toBe(200);
  expect(bytes.length).toBeGreaterThan(0);
  return bytes;
}

export function splitRolesSuite(backend: SplitRolesBackend): void {
  if (!brokers && !kafkaRequired)
    console.warn(`[split-roles ${backend.name}] skipped: KAFKA_BROKERS not set (bash scripts/kafka-local.sh start; REQUIRE_KAFKA=1 fails instead)`);
  else if (backend.missing && !backend.required) console.warn(`[split-roles ${backend.name}] skipped: ${backend.missing}`);
  const runs = (Boolean(brokers) || kafkaRequired) && (!backend.missing || backend.required);
  describe.skipIf(!runs)(`the roles as separate processes: api ×2, worker ×2, projector ×2 on Kafka and ${backend.name} (issues 14, 27)`, () =>
    splitRoles(backend),
  );
}

function splitRoles(backend: SplitRolesBackend): void {
  /** Every topic and group of this run on the broker: suites on one broker never share one. */
  const kafkaPrefix = `split-${backend.name.toLowerCase()}-${RUN}.`;
  const dir = tempDir('gateway-split-');
  const roles = new Map<string, Role>();
  let tap: UpstreamTap;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let store: EventStore;
  let key: string;
  let accountId: string;
  let api1Base: string;
  const apis = (): [Role, Role] => [roles.get('api-1')!, roles.get('api-2')!];
  const client = (role: Role) => new Client(role.child.url, key);

  async function start(name: string, env: Record<string, string>, base?: string): Promise<Role> {
    const child = await startChildGateway(dir.path, {
      ...COMMON,
      ...backend.env(),
      KAFKA_BROKERS: brokers!,
      KAFKA_PREFIX: kafkaPrefix,
      SIMULATOR_URL: tap.simulatorUrlFor(name),
      ...env,
    });
    const log: string[] = [];
    child.process.stderr?.on('data', (d: Buffer) => log.push(d.toString()));
    child.process.stdout?.on('data', (d: Buffer) => log.push(d.toString()));
    const role: Role = { name, child, log, ...(base ? { base } : {}) };
    roles.set(name, role);
    return role;
  }

  async function startApi(name: string, port: number): Promise<Role> {
    const base = `http://127.0.0.1:${port}`;
    return start(name, { ROLE: 'api', PORT: String(port), PUBLIC_BASE_URL: base }, base);
  }

  /**
   * A worker, once it owns partitions and has adopted their tasks, and its callback consumer
   * runs. As in docker-compose.yml, the callbacks it delivers are signed on api-1's base.
   */
  async function startWorker(name: string): Promise<Role> {
    const role = await start(name, { ROLE: 'worker', PUBLIC_BASE_URL: api1Base });
    await eventually(
      async () => {
        if (role.child.process.exitCode !== null) throw new Error(`${name} exited with ${role.child.process.exitCode}: ${role.log.join('')}`);
        const body = (await (await fetch(`${role.child.url}/readyz`)).json()) as { processes: Record<string, { last_pass: string | null }> };
        return body.processes.poller?.last_pass && body.processes['callback-scheduler']?.last_pass ? true : undefined;
      },
      60_000,
      100,
    ).catch((err: unknown) => {
      throw new Error(`${name} did not take part: ${String(err)}\n${role.log.join('').slice(-4000)}`);
    });
    return role;
  }

  async function stop(role: Role, signal: NodeJS.Signals): Promise<void> {
    await role.child.kill(signal);
    roles.delete(role.name);
  }

  function showLogsOnFailure(): void {
    onTestFailed(() => {
      for (const role of roles.values()) console.error(`--- ${role.name} stderr (last 4000 chars)\n${role.log.join('').slice(-4000)}`);
    });
  }

  beforeAll(async () => {
    if (!brokers) throw new Error('REQUIRE_KAFKA=1 but KAFKA_BROKERS is not set: start a broker with `bash scripts/kafka-local.sh start`');
    if (backend.missing) throw new Error(`split-roles on ${backend.name} is required but cannot run: ${backend.missing}`);
    await backend.start?.();
    tap = await startUpstreamTap();
    receiver = await startReceiver(() => 200);
    const [port1, port2] = [await freePort(), await freePort()];
    api1Base = `http://127.0.0.1:${port1}`;
    // The simulator the tap forwards to: api-1's.
    tap.target = api1Base;
    // As `docker compose up` does: every role at once, on an empty DATA_DIR (and, in CI, a fresh
    // broker), in no particular order: the projectors (two, a group) come last, later than the
    // 10 s an api instance waits for the views on request paths (its seeding must wait longer).
    const projectorLate = (name: string) => new Promise((resolve) => setTimeout(resolve, PROJECTOR_DELAY_MS)).then(() => start(name, { ROLE: 'projector' }));
    await settleAll([
      startApi('api-1', port1),
      startApi('api-2', port2),
      startWorker('worker-1'),
      startWorker('worker-2'),
      projectorLate('projector-1'),
      projectorLate('projector-2'),
    ]);
    store = backend.openEvents(dir.path);

    const admin = new Client(api1Base);
    await admin.login('admin', ADMIN_PASSWORD);
    const user = await newUser(admin, { credit: 1_000_000_000 });
    accountId = user.accountId;
    key = (await newToken(user.client)).key;
  }, 120_000);

  afterAll(async () => {
    await stopGateways([...roles.values()].map((role) => role.child));
    await store?.close();
    await tap?.close();
    await receiver?.close();
    await backend.stop?.();
    dir.remove();
  }, 60_000);

  const taskEvents = async (taskId: string): Promise<RecordedEvent[]> => store.readStream(`task-${taskId}`);

  /** Upstream submits of a task: POSTs through the tap whose body carries its marker. */
  const submitsOf = (marker: string) => tap.requests.filter((r) => r.method === 'POST' && r.body.includes(marker));

  /** Each (succeeded) task: one reservation, settled exactly once, never released. */
  async function expectSettledOnce(taskIds: readonly string[]): Promise<void> {
    const account = await store.readStream(`account-${accountId}`);
    for (const id of taskIds) {
      const of = (type: string) => account.filter((e) => e.type === type && (e.data as { taskId?: string }).taskId === id);
      expect(of('QuotaReserved'), `${id} reserved`).toHaveLength(1);
      expect(of('QuotaSettled'), `${id} settled`).toHaveLength(1);
      expect(of('QuotaReleased'), `${id} released`).toHaveLength(0);
    }
  }

  it('every family: submit → poll → settle → callback → assets through both apis, each on its own base', async () => {
    showLogsOnFailure();
    const [api1, api2] = apis();
    const submitted = await Promise.all(
      FAMILIES.map(async (family, i) => {
        const via = i % 2 === 0 ? api1 : api2;
        const marker = `split-${RUN}-family-${i}`;
        const id = await family.submit(client(via), marker, receiver.url);
        return { family, id, marker };
      }),
    );

    // A synchronous image through api-2: the answer waits for the image; the task is read again on both.
    const syncMarker = `split-${RUN}-sync`;
    const call = await client(api2).post<unknown>('/v1/images/generations', { model: 'std-image', prompt: `a kite ${syncMarker}`, size: '1024x1024' });
    expect(call.status, JSON.stringify(call.body)).toBe(200);
    const syncId = call.headers.get('x-task-id')!;
    expect(text(call.body, 'data.0.url').startsWith(`${api2.base}/assets/`), text(call.body, 'data.0.url')).toBe(true);

    for (const { family, id } of submitted) {
      // Polled through both apis until final; each answers its URLs on its own base.
      const finals = await Promise.all(
        [api1, api2].map((api) =>
          eventually(
            async () => {
              const r = await client(api).get<unknown>(family.query(id));
              if (r.status !== 200) throw new Error(`${family.name} ${api.name} answered ${r.status}: ${JSON.stringify(r.body)}`);
              return family.outcome(r.body) ? r.body : undefined;
            },
            30_000,
            50,
          ),
        ),
      );
      for (const [index, api] of [api1, api2].entries()) {
        const body = finals[index];
        expect(family.outcome(body), `${family.name} on ${api.name}: ${JSON.stringify(body)}`).toBe('ok');
        const urls = family.urls(body);
        for (const url of urls) {
          expect(url.startsWith(`${api.base}/assets/`), `${family.name} on ${api.name}: ${url}`).toBe(true);
          await download(url);
        }
        if (family.content) await download(`${api.child.url}${family.content(id)}`, { authorization: `Bearer ${key}` });
      }
    }
    for (const api of [api1, api2]) {
      const again = await client(api).get<unknown>(`/v1/images/generations/${syncId}`);
      expect(again.status, JSON.stringify(again.body)).toBe(200);
      const url = text(again.body, 'data.0.url');
      expect(url.startsWith(`${api.base}/assets/`), url).toBe(true);
      await download(url);
    }

    // Callbacks: one per hooked task, its URLs on the workers' base (api-1), downloadable.
    const hooked = submitted.filter((s) => s.family.hooked);
    const callbacks = await eventually(
      async () => {
        const bodies = receiver.received.map((r) => r.body);
        const found = hooked.map((s) => bodies.filter((b) => b.includes(s.id)));
        return found.every((f) => f.length > 0) ? found : undefined;
      },
      30_000,
      100,
    );
    for (const [index, bodies] of callbacks.entries()) {
      expect(bodies, `callbacks of ${hooked[index]!.family.name}`).toHaveLength(1);
      const urls = assetUrls(JSON.parse(bodies[0]!) as unknown);
      if (hooked[index]!.family.name !== 'Vid-H3') expect(urls.length, `${hooked[index]!.family.name} callback: ${bodies[0]}`).toBeGreaterThan(0);
      for (const url of urls) {
        expect(url.startsWith(`${api1.base}/assets/`), url).toBe(true);
        await download(url);
      }
    }

    // Each task submitted upstream once, recorded once, and settled once.
    for (const { family, id, marker } of submitted) {
      expect(submitsOf(marker), `${family.name} upstream submits`).toHaveLength(1);
      expect(
        (await taskEvents(id)).filter((e) => e.type === 'UpstreamSubmitted'),
        `${family.name} UpstreamSubmitted`,
      ).toHaveLength(1);
    }
    expect(submitsOf(syncMarker)).toHaveLength(1);
    await eventually(
      async () => {
        await expectSettledOnce([...submitted.map((s) => s.id), syncId]);
        return true;
      },
      15_000,
      100,
    );
  }, 60_000);

  interface Submitted {
    id: string;
    marker: string;
  }

  /** An async image through api-1 or api-2 in turn; `marker` ends with `-end` so no marker is a prefix of another. */
  async function submitImage(label: string, i: number, slow: boolean): Promise<Submitted> {
    const marker = `split-${RUN}-${label}-${i}-end`;
    const id = await FAMILIES[0]!.submit(client(apis()[i % 2]!), `${marker}${slow ? ' [sim:slow]' : ''}`, '');
    return { id, marker };
  }

  const upstreamIdOf = async (taskId: string): Promise<string | undefined> =>
    at((await taskEvents(taskId)).find((e) => e.type === 'UpstreamSubmitted')?.data, 'upstreamTaskId') as string | undefined;
  /** Polls of an upstream task through the tap (its id in the path or body, not a submit). */
  const pollsOf = (upstreamId: string) => tap.requests.filter((r) => r.path.includes(upstreamId) || (r.method !== 'POST' && r.body.includes(upstreamId)));
  const isFinal = async (taskId: string) => (await taskEvents(taskId)).some((e) => e.type === 'TaskSucceeded' || e.type === 'TaskFailed');

  async function expectFinished(tasks: readonly Submitted[], timeoutMs: number): Promise<void> {
    const [api1, api2] = apis();
    await eventually(
      async () => {
        const outcomes = await Promise.all(
          tasks.map(async (t, i) => FAMILIES[0]!.outcome((await client(i % 2 ? api2 : api1).get<unknown>(FAMILIES[0]!.query(t.id))).body)),
        );
        return outcomes.every((o) => o !== undefined) ? outcomes : undefined;
      },
      timeoutMs,
      200,
    ).then((outcomes) =>
      expect(
        outcomes.every((o) => o === 'ok'),
        JSON.stringify(outcomes),
      ).toBe(true),
    );
  }

  /** One submit upstream per task (tap), one recorded (`UpstreamSubmitted`). */
  async function expectSubmittedOnce(tasks: readonly Submitted[]): Promise<void> {
    for (const t of tasks) {
      expect(submitsOf(t.marker), `upstream submits of ${t.id}`).toHaveLength(1);
      expect(
        (await taskEvents(t.id)).filter((e) => e.type === 'UpstreamSubmitted'),
        `UpstreamSubmitted of ${t.id}`,
      ).toHaveLength(1);
    }
  }

  /**
   * Tasks running upstream, then one of the two workers goes (`signal`); after it exited, more
   * tasks are submitted until one lands on a partition it owned. The other worker must follow
   * the first ones (poll them after the exit) and dispatch the new ones, each once.
   */
  async function failover(label: string, signal: NodeJS.Signals, finishWithinMs: number): Promise<void> {
    const workers = [...roles.values()].filter((r) => r.name.startsWith('worker-'));
    expect(workers).toHaveLength(2);
    const running = await settleAll(Array.from({ length: 8 }, (_, i) => submitImage(`${label}-running`, i, true)));
    const upstreamIds = await eventually(
      async () => {
        const ids = await Promise.all(running.map((t) => upstreamIdOf(t.id)));
        return ids.every((u): u is string => u !== undefined && pollsOf(u).length > 0) ? ids : undefined;
      },
      20_000,
      50,
    );
    const polledBy = (name: string) => running.filter((_, i) => pollsOf(upstreamIds[i]!).some((r) => r.who === name));
    const [victim, survivor] = polledBy(workers[0]!.name).length >= polledBy(workers[1]!.name).length ? [workers[0]!, workers[1]!] : [workers[1]!, workers[0]!];
    const victimTasks = polledBy(victim.name);
    expect(victimTasks.length, `${victim.name} follows some of the running tasks`).toBeGreaterThan(0);
    const victimPartitions = new Set(victimTasks.map((t) => partitionForKey(t.id, PARTITIONS)));

    await stop(victim, signal);
    const goneAt = Date.now();
    // Its tasks that were still running when it went: the survivor must take them over.
    const orphans: Submitted[] = [];
    for (const t of victimTasks) if (!(await isFinal(t.id))) orphans.push(t);
    expect(orphans.length, `some of ${victim.name}'s tasks outlive it`).toBeGreaterThan(0);

    // Submitted after it went, until one is on a partition it owned (about one in four).
    const after: Submitted[] = [];
    while (!after.some((t) => victimPartitions.has(partitionForKey(t.id, PARTITIONS)))) {
      expect(after.length, 'a task on a partition of the stopped worker').toBeLessThan(60);
      after.push(await submitImage(`${label}-after`, after.length, false));
    }

    await expectFinished([...running, ...after], finishWithinMs);
    for (const t of orphans) {
      const upstreamId = (await upstreamIdOf(t.id))!;
      expect(
        pollsOf(upstreamId).some((r) => r.who === survivor.name && r.at >= goneAt),
        `${survivor.name} followed ${t.id} after ${victim.name} went`,
      ).toBe(true);
    }
    for (const t of after) {
      expect(
        submitsOf(t.marker).map((r) => r.who),
        `who submitted ${t.id}`,
      ).toEqual([survivor.name]);
    }
    await expectSubmittedOnce([...running, ...after]);
    await eventually(
      async () => {
        await expectSettledOnce([...running, ...after].map((t) => t.id));
        return true;
      },
      15_000,
      100,
    );
  }

  it('the projector publishes task and billing events on the Kafka topics, keyed by task and by account, in order', async () => {
    showLogsOnFailure();
    // What a downstream subscriber reads: its own consumer group, from the beginning of each topic.
    const bus = createKafkaBus({ brokers: brokers!, clientId: `split-roles-downstream-${RUN}`, partitions: PARTITIONS, namePrefix: kafkaPrefix });
    const seen = new Map<string, DeliveredMessage[]>([
      [TASK_TOPIC, []],
      [BILLING_TOPIC, []],
    ]);
    const consumers = await Promise.all(
      [TASK_TOPIC, BILLING_TOPIC].map((topic) =>
        bus.consume({ topic, groupId: `split-roles-downstream-${RUN}-${topic}`, fromBeginning: true, handle: async (m) => void seen.get(topic)!.push(m) }),
      ),
    );
    try {
      const task = await submitImage('published', 0, false);
      await expectFinished([task], 20_000);
      const taskEvents = await eventually(
        async () => {
          const mine = seen.get(TASK_TOPIC)!.filter((m) => m.key === task.id);
          return mine.some((m) => JSON.parse(m.value).type === 'TaskSucceeded') ? mine : undefined;
        },
        30_000,
        100,
      );
      const envelopes = taskEvents.map((m) => JSON.parse(m.value) as EventEnvelope);
      expect(envelopes[0]!.type).toBe('TaskSubmitted');
      expect(envelopes.at(-1)!.type).toBe('TaskSucceeded');
      const positions = envelopes.map((e) => BigInt(e.position));
      expect(positions).toEqual([...positions].sort((a, b) => (a < b ? -1 : 1)));
      expect(envelopes[0]).toMatchObject({ specversion: 'gateway.events.v1', topic: TASK_TOPIC, key: task.id, accountId, stream: `task-${task.id}` });
      expect(taskEvents[0]!.id).toBe(envelopes[0]!.id);
      const billing = await eventually(
        async () => {
          const mine = seen
            .get(BILLING_TOPIC)!
            .filter((m) => m.key === accountId)
            .map((m) => (JSON.parse(m.value) as EventEnvelope).type);
          return mine.includes('QuotaSettled') ? mine : undefined;
        },
        30_000,
        100,
      );
      expect(billing).toEqual(expect.arrayContaining(['AccountOpened', 'QuotaCredited', 'QuotaReserved', 'QuotaSettled']));
    } finally {
      await Promise.all(consumers.map((c) => c.close()));
      await bus.close();
    }
  });

  /** What a projector runs now, from its /readyz (projections/projector-group.ts). */
  async function projectorShare(role: Role): Promise<{ projections: string[]; singletons: string[] }> {
    const body = (await (await fetch(`${role.child.url}/readyz`)).json()) as { processes: { projections?: { projections?: string[]; singletons?: string[] } } };
    return { projections: body.processes.projections?.projections ?? [], singletons: body.processes.projections?.singletons ?? [] };
  }

  it('two projectors share the projections; one killed with SIGKILL under load: the other takes over, no view loses or repeats an event, every callback is delivered once', async () => {
    showLogsOnFailure();
    const projectors = [roles.get('projector-1')!, roles.get('projector-2')!];
    const everyProjection = PROJECTION_NAMES;
    // Shared: each folds some, together all of them once; the publisher runs in one.
    const shares = await eventually(
      async () => {
        const [a, b] = await Promise.all(projectors.map(projectorShare));
        const together = [...a!.projections, ...b!.projections].sort();
        return a!.projections.length > 0 && b!.projections.length > 0 && together.join() === everyProjection.join() ? [a!, b!] : undefined;
      },
      30_000,
      200,
    );
    const victimIndex = shares.findIndex((s) => s.singletons.includes('publisher'));
    expect(victimIndex, 'one projector runs the publisher').toBeGreaterThanOrEqual(0);
    const [victim, survivor] = [projectors[victimIndex]!, projectors[1 - victimIndex]!];
    const victimProjections = shares[victimIndex]!.projections;

    // Hooked tasks through both apis, before, across and after the kill.
    const hooked = FAMILIES.filter((f) => f.name === 'vidgen' || f.name === 'tune');
    const submitted: Array<{ family: Family; id: string }> = [];
    let loading = true;
    const load = Promise.all(
      [0, 1].map(async (lane) => {
        for (let i = lane; loading; i += 2) {
          const family = hooked[i % hooked.length]!;
          submitted.push({ family, id: await family.submit(client(apis()[lane]!), `split-${RUN}-projector-${i}-end`, receiver.url) });
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const views = backend.openViews(dir.path);
    try {
      // The kill lands with work in flight. Folding keeps up with this load within milliseconds,
      // so the victim is frozen first (SIGSTOP, wherever it was, in a batch or between two) while
      // the load goes on, until some of its projections are behind the head; then killed. Shown
      // after the kill: their checkpoints, frozen (the survivor takes them over only when the
      // victim's session ends), still behind the head read before it.
      const checkpoints = () => Promise.all(victimProjections.map(async (name) => (await views.getCheckpoint(name)) ?? 0n));
      let head = 0n;
      process.kill(victim.child.process.pid!, 'SIGSTOP');
      await eventually(
        async () => {
          head = await store.headPosition();
          return (await checkpoints()).some((c) => c < head) ? true : undefined;
        },
        10_000,
        20,
      );
      await victim.child.kill('SIGKILL');
      roles.delete(victim.name);
      const frozen = await checkpoints();
      expect(
        frozen.filter((c) => c < head).length,
        `projections of ${victim.name} behind the head (${head}) when it was killed: ${frozen.join(',')}`,
      ).toBeGreaterThan(0);
      await new Promise((resolve) => setTimeout(resolve, 4000));
      loading = false;
      await load;

      // The survivor folds everything and publishes once the broker ends the victim's session (10 s).
      await eventually(
        async () => {
          const share = await projectorShare(survivor);
          return [...share.projections].sort().join() === everyProjection.join() && share.singletons.includes('publisher') ? true : undefined;
        },
        60_000,
        200,
      );
      // Every task finishes, seen through the views both apis read.
      await eventually(
        async () => {
          const outcomes = await Promise.all(
            submitted.map(async (t, i) => t.family.outcome((await client(apis()[i % 2]!).get<unknown>(t.family.query(t.id))).body)),
          );
          return outcomes.every((o) => o === 'ok') ? true : undefined;
        },
        60_000,
        200,
      );
      // One callback per task, naming it, its results downloadable.
      const callbacks = await eventually(
        async () => {
          const found = submitted.map((t) => receiver.received.map((r) => r.body).filter((b) => b.includes(t.id)));
          return found.every((f) => f.length > 0) ? found : undefined;
        },
        60_000,
        200,
      );
      for (const [i, bodies] of callbacks.entries()) {
        expect(bodies, `callbacks of ${submitted[i]!.family.name} ${submitted[i]!.id}`).toHaveLength(1);
        const urls = assetUrls(JSON.parse(bodies[0]!) as unknown);
        expect(urls.length, bodies[0]).toBeGreaterThan(0);
      }
      await download(assetUrls(JSON.parse(callbacks.at(-1)![0]!) as unknown)[0]!);

      // Every view as one runner alone makes it of the same events, once the views reached the head.
      await expectViewsAsOneRunnerMakesThem(views);
    } finally {
      loading = false;
      await load.catch(() => undefined);
      await views.close();
    }
    expect(submitted.length).toBeGreaterThan(20);
  }, 240_000);

  /**
   * Every document of every view equals what one projection runner alone, from the beginning,
   * makes of the same events on a view store of its own: no event lost, none folded twice.
   */
  async function expectViewsAsOneRunnerMakesThem(views: ViewStore): Promise<void> {
    const follower = createCheckpointFollower(views, ALL_PROJECTIONS, { refreshMs: 100 });
    await follower.start();
    await waitForProjectedHead(store, follower, 60_000).finally(() => follower.stop());
    const alone = createSqliteViewStore({ path: join(dir.path, `views-alone-${Date.now()}.sqlite`) });
    const runner = createProjectionRunner({ events: store, views: alone, projections: ALL_PROJECTIONS, log: pino({ level: 'silent' }) });
    try {
      await runner.start();
      await waitForProjectedHead(store, runner, 120_000);
      for (const view of [...new Set(ALL_PROJECTIONS.map((p) => p.view))]) {
        // By id, compared as values: PostgreSQL's jsonb keeps a document's keys in its own order.
        const sorted = (docs: ReadonlyArray<{ id: string; doc: unknown }>) =>
          docs.map((d) => [d.id, d.doc] as const).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
        const [live, rebuilt] = [sorted(await views.find(view, {})), sorted(await alone.find(view, {}))];
        expect(live.length, `view ${view}`).toBe(rebuilt.length);
        expect(live, `view ${view}`).toEqual(rebuilt);
      }
    } finally {
      await runner.stop();
      await alone.close();
    }
  }

  it('the workers keep the settler and dispatcher positions per partition, never one checkpoint for all', async () => {
    showLogsOnFailure();
    // One task's events pass every owned partition's position on both workers.
    await expectFinished([await submitImage('checkpoints', 0, false)], 20_000);
    const views = backend.openViews(dir.path);
    try {
      const stored = async (name: string) => Promise.all(Array.from({ length: PARTITIONS }, (_, p) => views.getCheckpoint(`processor:${name}:p${p}`)));
      await eventually(
        async () => ((await stored('settler')).every((c) => c !== undefined) && (await stored('dispatcher')).every((c) => c !== undefined) ? true : undefined),
        10_000,
        200,
      );
      // A shared checkpoint would let a restarted worker resume from the fastest one's position.
      expect(await views.getCheckpoint('processor:settler')).toBeUndefined();
      expect(await views.getCheckpoint('processor:dispatcher')).toBeUndefined();
    } finally {
      await views.close();
    }
  });

  /**
   * The load of the crash test: one submitter per api, one request at a time, until `until`
   * resolves; each answer either acknowledged (200, the task id) or refused (status and body).
   */
  async function submitWhile(label: string, until: Promise<unknown>): Promise<{ acknowledged: Submitted[]; refused: string[] }> {
    const acknowledged: Submitted[] = [];
    const refused: string[] = [];
    let loading = true;
    void until.finally(() => (loading = false));
    await Promise.all(
      [0, 1].map(async (lane) => {
        for (let i = lane; loading; i += 2) {
          const marker = `split-${RUN}-${label}-${i}-end`;
          const prompt = `a fox ${marker}${i % 3 === 0 ? ' [sim:slow]' : ''}`;
          const r = await client(apis()[lane]!)
            .post<unknown>('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt, n: 1, size: '832x1216' })
            .catch((err: unknown) => ({ status: 0, body: String(err) }));
          if (r.status === 200) acknowledged.push({ id: text(r.body, 'id'), marker });
          else refused.push(`${r.status} ${JSON.stringify(r.body)}`);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }),
    );
    return { acknowledged, refused };
  }

  /** Every reservation on the account ends settled or released, exactly once: none stuck, none charged twice. */
  async function expectReservationsClosed(): Promise<void> {
    const account = await store.readStream(`account-${accountId}`);
    const ends = new Map<string, string[]>();
    for (const e of account) {
      const taskId = (e.data as { taskId?: string }).taskId;
      if (!taskId) continue;
      if (e.type === 'QuotaReserved') ends.set(taskId, ends.get(taskId) ?? []);
      if (e.type === 'QuotaSettled' || e.type === 'QuotaReleased') ends.set(taskId, [...(ends.get(taskId) ?? []), e.type]);
    }
    const open = [...ends].filter(([, closed]) => closed.length !== 1);
    expect(open, 'reservations not closed exactly once').toEqual([]);
  }

  if (backend.crashRestart) {
    const crashRestart = backend.crashRestart.bind(backend);
    it(`${backend.name} crashed and restarted in the middle of a load: nothing acknowledged lost, nothing charged twice, every role reconnects`, async () => {
      showLogsOnFailure();
      let crashedAt = 0;
      let restartedAt = 0;
      const window = (async () => {
        await new Promise((resolve) => setTimeout(resolve, 3000));
        crashedAt = Date.now();
        // Down for 3 s: long enough that every role's connections fail and are opened again.
        await crashRestart(3);
        restartedAt = Date.now();
        await new Promise((resolve) => setTimeout(resolve, 5000));
      })();
      const [{ acknowledged, refused }] = await Promise.all([submitWhile('crash', window), window]);
      const tapSeen = () => tap.requests.filter((r) => r.method === 'POST' && r.body.includes(`split-${RUN}-crash-`));
      expect(tapSeen().filter((r) => r.at < crashedAt).length, 'submits upstream before the crash').toBeGreaterThan(0);

      // While the store was down a submit is refused as one to try again (503, Retry-After),
      // never a 500, a hang or a dropped connection.
      for (const r of refused) expect(r).toMatch(/^503 /);

      // Every acknowledged task finishes, submitted upstream once, settled once; every
      // reservation (also of a submit whose answer the crash cut off) ends exactly once.
      // Within 40 s of the window's end: the workers wait for the store and dispatch as soon as it
      // is back, not a minute after the submit when the redispatch sweep would find the task.
      await expectFinished(acknowledged, 40_000);
      await expectSubmittedOnce(acknowledged);
      await eventually(
        async () => {
          await expectSettledOnce(acknowledged.map((t) => t.id));
          await expectReservationsClosed();
          return true;
        },
        40_000,
        200,
      );

      // Every role reconnected: both apis acknowledged submits after the restart (their views
      // read back through expectFinished, the projector's), both workers submitted upstream
      // after it, and every role reports ready.
      const lateTasks = acknowledged.filter((t) => submitsOf(t.marker).some((r) => r.at >= restartedAt));
      expect(
        new Set(
          tapSeen()
            .filter((r) => r.at >= restartedAt)
            .map((r) => r.who),
        ),
        'workers submitting after the restart',
      ).toEqual(new Set(['worker-1', 'worker-2']));
      expect(lateTasks.length).toBeGreaterThan(0);
      for (const role of roles.values()) {
        const ready = await fetch(`${role.child.url}/readyz`);
        expect(ready.status, `${role.name} /readyz: ${await ready.clone().text()}`).toBe(200);
      }
    }, 180_000);
  }

  it('a worker stopped with SIGTERM: the other takes over its partitions, nothing is submitted twice, all finish and settle once', async () => {
    showLogsOnFailure();
    await failover('term', 'SIGTERM', 30_000);
  }, 45_000);

  it('a worker killed with SIGKILL (none dispatching): its partitions move when its session ends, nothing is submitted twice, all finish and settle once', async () => {
    showLogsOnFailure();
    await startWorker('worker-3');
    // The survivor gets the dead member's partitions once the broker ends its session (30 s).
    await failover('kill', 'SIGKILL', 60_000);
  }, 90_000);
}
