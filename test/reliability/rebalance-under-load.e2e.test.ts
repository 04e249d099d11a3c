/**
 * Four workers rebalance while 5,000 tasks are in flight (issue 26): an api (serving the
 * simulator), a projector and three workers as separate processes on SQLite files they share and
 * a real Kafka broker; 5,000 slow clip tasks submitted and running upstream (10 minutes each),
 * polled every 10 s; then a fourth worker joins. Every upstream request goes through a counting
 * tap (test/support/upstream-tap.ts), so each poll is known with its time and the worker that made
 * it; the task behind it is known from its `UpstreamSubmitted`.
 *
 * A partition that did not move (the same worker polled its tasks before and after the join)
 * must be polled throughout: kafkajs rebalances eagerly, and before incremental rebalancing
 * (ConsumerOptions.incrementalRebalance) every worker stopped all its polling when the
 * rebalance started and re-read every in-flight task before polling again. The largest gap
 * between two polls of a partition's tasks, and of one task, is printed and bounded. Every task
 * is polled after the join by the owner of its partition, the moved ones by their new owner.
 *
 * Needs KAFKA_BROKERS (`bash scripts/kafka-local.sh start`); skipped with one line without it,
 * failed without it under REQUIRE_KAFKA=1. REBALANCE_TASKS changes the load (default 5,000).
 */
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { join } from 'node:path';
import { partitionForKey } from '../../src/adapters/inproc/murmur2.js';
import { createSqliteEventStore } from '../../src/adapters/sqlite/event-store.js';
import type { EventStore } from '../../src/ports/event-store.js';
import { freePort, startChildGateway, stopGateways, type ChildGateway } from '../support/child-gateway.js';
import { ADMIN_PASSWORD, Client, eventually, newToken, newUser } from '../support/gateway.js';
import { tempDir } from '../support/tmp.js';
import { startUpstreamTap, type UpstreamTap } from '../support/upstream-tap.js';

const brokers = process.env.KAFKA_BROKERS?.trim();
const kafkaRequired = process.env.REQUIRE_KAFKA === '1';
if (!brokers && !kafkaRequired)
  console.warn('[rebalance-under-load] skipped: KAFKA_BROKERS not set (bash scripts/kafka-local.sh start; REQUIRE_KAFKA=1 fails instead)');

const TASKS = Number(process.env.REBALANCE_TASKS ?? 5000);
const PARTITIONS = 16;
const POLL_INTERVAL_MS = 10_000;
/** After the fourth worker is ready: long enough for every task to be polled again by its owner. */
const OBSERVE_AFTER_MS = 2 * POLL_INTERVAL_MS;
const RUN = Date.now().toString(36);
const COMMON = {
  // [sim:slow] is 20 steps: 10 minutes upstream, still running when the test ends.
  SIM_STEP_MS: '30000',
  POLL_INTERVAL_MS: String(POLL_INTERVAL_MS),
  BUS_PARTITIONS: String(PARTITIONS),
  LOG_LEVEL: 'warn',
};
const POLL_PATH = /^\/_sim\/clip\/v1\/videos\/text2video\/([^/?]+)/;

interface Role {
  name: string;
  child: ChildGateway;
  log: string[];
}

describe.skipIf(!brokers && !kafkaRequired)(`four workers rebalancing under ${TASKS} tasks in flight (Kafka, SQLite)`, () => {
  const dir = tempDir('gateway-rebalance-');
  const roles = new Map<string, Role>();
  let tap: UpstreamTap;
  let store: EventStore;
  let apiBase: string;

  async function start(name: string, env: Record<string, string>): Promise<Role> {
    const child = await startChildGateway(dir.path, {
      ...COMMON,
      KAFKA_BROKERS: brokers!,
      KAFKA_PREFIX: `rebalance-${RUN}.`,
      SIMULATOR_URL: tap.simulatorUrlFor(name),
      ...env,
    });
    const log: string[] = [];
    child.process.stderr?.on('data', (d: Buffer) => log.push(d.toString()));
    child.process.stdout?.on('data', (d: Buffer) => log.push(d.toString()));
    const role = { name, child, log };
    roles.set(name, role);
    return role;
  }

  /** Each worker's task partitions, as its /readyz shows them. */
  async function workerPartitions(): Promise<string> {
    const shown = await Promise.all(
      [...roles.values()]
        .filter((r) => r.name.startsWith('worker'))
        .map(async (r) => {
          const body = (await (await fetch(`${r.child.url}/readyz`)).json()) as { processes: Record<string, { partitions?: number[] }> };
          return `${r.name}: ${body.processes.poller?.partitions?.join(',') ?? '?'}`;
        }),
    );
    return shown.join('; ');
  }

  /** A worker once it owns partitions and has adopted their tasks. */
  async function startWorker(name: string): Promise<Role> {
    const role = await start(name, { ROLE: 'worker', PUBLIC_BASE_URL: apiBase });
    await eventually(
      async () => {
        const body = (await (await fetch(`${role.child.url}/readyz`)).json()) as { processes: Record<string, { last_pass: string | null }> };
        return body.processes.poller?.last_pass ? true : undefined;
      },
      60_000,
      100,
    );
    return role;
  }

  beforeAll(async () => {
    if (!brokers) throw new Error('REQUIRE_KAFKA=1 but KAFKA_BROKERS is not set: start a broker with `bash scripts/kafka-local.sh start`');
    tap = await startUpstreamTap();
    const port = await freePort();
    apiBase = `http://127.0.0.1:${port}`;
    tap.target = apiBase;
    // Together, as `docker compose up` starts them: an api waits for the projector's views to seed.
    await Promise.all([
      start('api', { ROLE: 'api', PORT: String(port), PUBLIC_BASE_URL: apiBase }),
      start('projector', { ROLE: 'projector' }),
      ...['worker-1', 'worker-2', 'worker-3'].map(startWorker),
    ]);
    store = createSqliteEventStore({ path: join(dir.path, 'events.sqlite') });
  }, 180_000);

  afterAll(async () => {
    await stopGateways([...roles.values()].map((role) => role.child));
    await store?.close();
    await tap?.close();
    dir.remove();
  }, 60_000);

  it('a fourth worker joins: partitions that did not move are polled throughout, every task is polled by its partition’s owner after', async () => {
    onTestFailed(() => {
      for (const role of roles.values()) console.error(`--- ${role.name} (last 3000 chars)\n${role.log.join('').slice(-3000)}`);
    });
    const admin = new Client(apiBase);
    await admin.login('admin', ADMIN_PASSWORD);
    const user = await newUser(admin, { credit: 1e13 });
    const api = new Client(apiBase, (await newToken(user.client)).key);

    const startedAt = Date.now();
    // 5,000 submits, 16 at a time; an answer of 429 or 503 (busy) is tried again.
    const taskIds: string[] = [];
    let retried = 0;
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < TASKS) {
          const i = next++;
          for (;;) {
            const r = await api.post<{ data?: { task_id?: string } }>('/clip/v1/videos/text2video', {
              model_name: 'clip-v1',
              prompt: `a kite [sim:slow] rb-${RUN}-${i}`,
            });
            if (r.status === 429 || r.status === 503) {
              retried += 1;
              await new Promise((resolve) => setTimeout(resolve, 100));
              continue;
            }
            expect(r.status, JSON.stringify(r.body)).toBe(200);
            taskIds.push(r.body.data!.task_id!);
            break;
          }
        }
      }),
    );
    expect(new Set(taskIds).size).toBe(TASKS);
    const phase = (what: string) => console.log(`[rebalance-under-load] +${Math.round((Date.now() - startedAt) / 1000)} s ${what}`);
    phase(`${TASKS} submitted`);

    // Every task submitted upstream once, and followed: polled at least twice since.
    const upstreamToTask = new Map<string, string>();
    // A submit whose connection is closed under it is sent once more (upstream-http.ts); one
    // closed twice fails its task, the clip channel being the only one (a CI run under full load
    // failed 312 before the re-send: 5 such failures in a row open the channel's circuit, and
    // every submit meanwhile fails too). Those are counted, not followed.
    const failed = new Set<string>();
    let readTo = 0n;
    await eventually(
      async () => {
        // The log read on from where the last look ended, a page at a time.
        for (;;) {
          const page = await store.readAll({ after: readTo, maxCount: 5000, streamPrefixes: ['task-'] });
          if (page.length === 0) break;
          for (const e of page) {
            if (e.type === 'UpstreamSubmitted') upstreamToTask.set((e.data as { upstreamTaskId: string }).upstreamTaskId, e.streamName.slice('task-'.length));
            if (e.type === 'TaskFailed') failed.add(e.streamName.slice('task-'.length));
          }
          readTo = page[page.length - 1]!.position;
        }
        const submitted = new Set(upstreamToTask.values());
        const waitingIds = taskIds.filter((id) => !submitted.has(id) && !failed.has(id));
        if (waitingIds.length > 0) {
          const waiting = new Set(waitingIds.map((id) => partitionForKey(id, PARTITIONS)));
          throw new Error(
            `${upstreamToTask.size} of ${TASKS} submitted upstream, ${failed.size} failed; the others are of partitions ${[...waiting].sort((a, b) => a - b).join(',')} (${await workerPartitions()})`,
          );
        }
        return true;
      },
      180_000,
      1000,
    );
    const inFlight = taskIds.filter((id) => !failed.has(id));
    expect(failed.size, 'tasks whose submit the upstream cut off').toBeLessThan(TASKS / 100);
    phase(`${inFlight.length} tasks submitted upstream and in flight, ${failed.size} failed at submit`);
    const polls = () =>
      tap.requests.flatMap((r) => {
        const upstreamId = r.method === 'GET' ? POLL_PATH.exec(r.path)?.[1] : undefined;
        const taskId = upstreamId ? upstreamToTask.get(upstreamId) : undefined;
        return taskId ? [{ taskId, partition: partitionForKey(taskId, PARTITIONS), who: r.who, at: r.at }] : [];
      });
    await eventually(
      async () => {
        const count = new Map<string, number>();
        for (const p of polls()) count.set(p.taskId, (count.get(p.taskId) ?? 0) + 1);
        const twice = [...count.values()].filter((n) => n >= 2).length;
        if (twice < inFlight.length) throw new Error(`${twice} of ${inFlight.length} tasks polled twice`);
        return true;
      },
      120_000,
      1000,
    );
    phase('every task polled twice; a fourth worker starts');

    // The join, under the load.
    const joinStartedAt = Date.now();
    await startWorker('worker-4');
    const joinedAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, OBSERVE_AFTER_MS));
    const endAt = Date.now();
    const windowStart = joinStartedAt - POLL_INTERVAL_MS;

    const inWindow = polls().filter((p) => p.at >= windowStart && p.at <= endAt);
    const pollersBefore = new Map<number, Set<string>>();
    const pollersAfter = new Map<number, Set<string>>();
    const pollersAll = new Map<number, Set<string>>();
    const add = (map: Map<number, Set<string>>, partition: number, who: string) => map.set(partition, (map.get(partition) ?? new Set()).add(who));
    for (const p of inWindow) {
      add(pollersAll, p.partition, p.who);
      if (p.at < joinStartedAt) add(pollersBefore, p.partition, p.who);
      if (p.at >= endAt - POLL_INTERVAL_MS) add(pollersAfter, p.partition, p.who);
    }
    const partitions = Array.from({ length: PARTITIONS }, (_, p) => p);
    /** The one worker that polled the partition's tasks in that part of the window ('' for none, '+' joined for several). */
    const owner = (map: Map<number, Set<string>>, p: number): string => [...(map.get(p) ?? [])].sort().join('+');
    const before = new Map(partitions.map((p) => [p, owner(pollersBefore, p)]));
    const after = new Map(partitions.map((p) => [p, owner(pollersAfter, p)]));
    const unmoved = partitions.filter((p) => before.get(p) === after.get(p) && pollersAll.get(p)?.size === 1);
    const moved = partitions.filter((p) => before.get(p) !== after.get(p));
    // Polling of the partitions that did not move never stopped: the largest gap between two polls
    // of each partition's tasks, and between two polls of one task, across the join.
    let partitionGap = 0;
    let taskGap = 0;
    const lastOfPartition = new Map<number, number>();
    const lastOfTask = new Map<string, number>();
    const unmovedSet = new Set(unmoved);
    /** Tasks of unmoved partitions that once waited more than 1.5 intervals between two polls. */
    const late = new Set<string>();
    for (const p of inWindow.filter((q) => unmovedSet.has(q.partition)).sort((a, b) => a.at - b.at)) {
      const lp = lastOfPartition.get(p.partition);
      if (lp !== undefined) partitionGap = Math.max(partitionGap, p.at - lp);
      lastOfPartition.set(p.partition, p.at);
      const lt = lastOfTask.get(p.taskId);
      if (lt !== undefined) taskGap = Math.max(taskGap, p.at - lt);
      if (lt !== undefined && p.at - lt > 1.5 * POLL_INTERVAL_MS) late.add(p.taskId);
      lastOfTask.set(p.taskId, p.at);
    }
    console.log(
      `[rebalance-under-load] ${inFlight.length} tasks in flight (${retried} submits tried again, ${failed.size} failed at submit), worker-4 ready ${joinedAt - joinStartedAt} ms after its start; ` +
        `${moved.length} partitions moved to it, ${unmoved.length} did not; polls of unmoved partitions in the window: ${lastOfTask.size} tasks, ` +
        `largest gap between two polls of one partition ${partitionGap} ms, of one task ${taskGap} ms (interval ${POLL_INTERVAL_MS} ms; ${late.size} tasks waited over 1.5 intervals once)`,
    );
    // The fourth worker took a share and only that moved (sticky assignment); the others kept theirs.
    expect(moved.length).toBeGreaterThanOrEqual(PARTITIONS / 4);
    expect(moved.every((p) => after.get(p) === 'worker-4')).toBe(true);
    expect(partitions.filter((p) => after.get(p) === 'worker-4').sort((a, b) => a - b)).toEqual(moved);
    expect(unmoved.length + moved.length).toBe(PARTITIONS);
    expect(unmoved.length).toBeGreaterThan(0);

    // Every task polled after the join by its partition's owner.
    const polledAfter = new Map<string, string>();
    for (const p of inWindow) if (p.at >= joinedAt) polledAfter.set(p.taskId, p.who);
    for (const taskId of inFlight) expect(polledAfter.get(taskId), taskId).toBe(after.get(partitionForKey(taskId, PARTITIONS)));

    // ~300 tasks a partition, each polled every 10 s: tens of polls a second per partition.
    // Measured: 652 ms; with eager rebalancing (every partition revoked, then re-adopted) 1,295 ms
    // and one task's gap 27 s: re-adoption reads every owned task again before its next poll.
    expect(partitionGap).toBeLessThan(3000);
    // One task's polls are 10 s apart; under this load (a fourth process starting on two cores)
    // some wait seconds for their channel's slots, stopped or not.
    expect(taskGap).toBeLessThan(2 * POLL_INTERVAL_MS);
  }, 600_000);
});
