/**
 * One seed's run: a deployment of `engines` engine processes, one API process and one
 * projector on shared stores, a stream of submitted tasks, and every fault the rates allow,
 * drawn from the seed; then the faults stop, the world drains, and the books are closed and
 * audited. The invariants (invariants.ts) are checked on every committed event and after every
 * step; the first violation ends the run with the trace of the task it concerns.
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import pino from 'pino';
import { streams, taskIdOfStream } from '../src/domain/events.js';
import { createAccountService } from '../src/engine/accounts/account-service.js';
import { changePrices } from '../src/engine/commands/price-commands.js';
import { createChannel } from '../src/engine/commands/channel-commands.js';
import { submitTask } from '../src/engine/tasks/submit.js';
import { runSyncTask, type SyncCallResult } from '../src/engine/tasks/sync-task.js';
import { UpstreamError } from '../src/engine/channels/upstream.js';
import { CALLBACK_GROUP } from '../src/engine/outbound/callback-consumer.js';
import { ENGINE_GROUP } from '../src/engine/dispatch/ownership.js';
import { auditAccounts } from '../src/audit/audit.js';
import { createSqliteEventStore } from '../src/adapters/sqlite/event-store.js';
import { createSqliteViewStore } from '../src/adapters/sqlite/view-store.js';
import type { EventStore, NewEvent } from '../src/ports/event-store.js';
import type { Caller } from '../src/engine/accounts/caller.js';
import { FaultCounts, type FaultRates } from './faults.js';
import { Books, InvariantViolation } from './invariants.js';
import { memoryAssetStore } from './memory-asset-store.js';
import { SimNode } from './node.js';
import { nodeEventStore } from './ports.js';
import { startApi, startEngine, startProjector, type ApiProcess, type Shared, type SimProcess } from './processes.js';
import type { Random } from './random.js';
import { SimBus } from './sim-bus.js';
import { SimVendor, UpstreamLedger } from './sim-upstream.js';
import type { VirtualTime } from './virtual-time.js';

export interface WorldOptions {
  seed: number;
  tasks: number;
  engines: number;
  rates: FaultRates;
  /** Virtual tasks submitted per second. */
  submitPerSecond: number;
  maxAgeSeconds: number;
  partitions: number;
  /**
   * One hot account: every submit on one account, jobs that run 5–8 minutes, so thousands of
   * reservations are open at once and its books must still close.
   */
  hot: boolean;
  /** Keep every trace line (for printing a failing task's trace); the hash is kept regardless. */
  keepTrace: boolean;
}

export interface RunResult {
  seed: number;
  tasks: number;
  /** Tasks whose stream was opened (acknowledged, or opened by a submit whose answer was lost): each lived a whole life cycle. */
  lifecycles: number;
  acknowledged: number;
  refused: number;
  succeeded: number;
  failed: number;
  steps: number;
  virtualSeconds: number;
  eventsChecked: number;
  invariantChecks: number;
  faults: Record<string, number>;
  /** Vendor jobs beyond one per task, by the window that allows them. */
  windows: Record<string, number>;
  /** Submit calls that reached a vendor beyond one per task (deduplicated by a client reference or not). */
  extraSubmitCalls: number;
  callbacksDelivered: number;
  /** The most reservations one account held open at once (a hot world's point: thousands). */
  mostOpen: number;
  /** Administrators' debits applied. */
  debits: number;
  /** Synchronous calls by how they were answered (the answer's task succeeded, an error, no answer: the front door was killed). */
  syncCalls: { succeeded: number; failed: number; unanswered: number };
  traceHash: string;
  violation?: { invariant: string; detail: string; subject: string; trace: string[] };
}

/** How long a task may stay unfinished past its deadline: the deadline sweeper's pass, a restart and a session timeout. */
export const DEADLINE_SLACK_SECONDS = 120;
const SESSION_TIMEOUT_MS = 10_000;
const FAULTS_AFTER_LAST_SUBMIT_MS = 60_000;
const ACCOUNTS = 3;
const OBSERVE_BATCH = 5000;
/** A pause mid-submit: from past the submit lease to past another engine's take-over of it. */
const MID_SUBMIT_PAUSE_MS = [120_000, 200_000] as const;
/** How long a process that lost a partition may still finish work it began on it (an upstream call's 30 s timeout and then some). */
const OWNER_GRACE_MS = 60_000;

/** The task an event is about: its task stream's, or the task an account or callback event names. */
function taskOf(stream: string, e: NewEvent): string | undefined {
  if (stream.startsWith('task-')) return taskIdOfStream(stream);
  if (stream.startsWith('callback-')) return stream.slice('callback-'.length);
  const data = e.data as { taskId?: unknown } | undefined;
  return typeof data?.taskId === 'string' ? data.taskId : undefined;
}
const MODEL = 'anime-diffusion-4-5-full';
const PRICE_PER_IMAGE = 10_000;
/** Of the submits, how many come with an administrator's debit beside them. */
const DEBIT_CHANCE = 0.01;
/** Of the requests, how many are synchronous calls (the upstream called in the request, re-hosted and settled there). */
const SYNC_CHANCE = 0.1;
/** A synchronous call's image: a few bytes, inline (re-hosted without a download). */
const SYNC_IMAGE_B64 = Buffer.from('simulated image').toString('base64');

export async function runWorld(time: VirtualTime, random: Random, o: WorldOptions): Promise<RunResult> {
  const faults = new FaultCounts();
  let faulty = false;
  const rnd = () => random;
  const trace: string[] = [];
  const hash = createHash('sha256');
  /** The trace's hash once taken: work still pending when the world ends (it ends at its first violation) traces nothing more. */
  let traceHash: string | undefined;
  const line = (text: string) => {
    if (traceHash !== undefined) return;
    const l = `${(time.elapsedMs() / 1000).toFixed(3)} ${text}`;
    hash.update(l).update('\n');
    if (o.keepTrace) trace.push(l);
  };
  // One store object for every process: appends wake subscribers in process, so no poll timer is needed.
  const store = createSqliteEventStore({ path: ':memory:', pollIntervalMs: 3_600_000 });
  const views = createSqliteViewStore({ path: ':memory:' });
  const assets = memoryAssetStore();
  const bus = new SimBus({ partitions: o.partitions, random: rnd, rates: o.rates, faults, faulty: () => faulty });
  const books = new Books();
  const ledger = new UpstreamLedger();
  const durationMs = o.hot ? ([300_000, 480_000] as const) : ([500, 90_000] as const);
  const upstreamDeps = {
    random: rnd,
    rates: o.rates,
    faults,
    faulty: () => faulty,
    ledger,
    submitArrived(submitter: SimNode, taskId: string) {
      const p = live.find((l) => l.node === submitter);
      if (!faulty || p?.role !== 'engine' || submitter.state !== 'up') return;
      // Another engine running, to take the lease over.
      if (!live.some((l) => l !== p && l.role === 'engine' && l.node.state === 'up') || !random.chance(o.rates.pauseMidSubmit)) return;
      // Past its lease (90 s) and another engine's watch of it; woken early, just after that one
      // takes the lease over (observe), while its own submit is still with the vendor.
      const wake = pause(p, 'pauseMidSubmit', random.int(MID_SUBMIT_PAUSE_MS[0], MID_SUBMIT_PAUSE_MS[1]));
      frozenMidSubmit.set(taskId, { node: submitter, wake });
    },
  };
  const vendors = new Map([
    ['sim://vendor-with-reference', new SimVendor({ name: 'ref', clientReference: true, durationMs }, upstreamDeps)],
    ['sim://vendor-plain', new SimVendor({ name: 'plain', clientReference: false, durationMs }, upstreamDeps)],
  ]);
  const nodeOptions = { latencyChance: 0.1, maxLatencyMs: 50 };
  let violation: InvariantViolation | undefined;
  const fail = (v: InvariantViolation) => (violation ??= v);
  ledger.onViolation = fail;
  /** Which process appended each event (by event id), for the trace; forgotten once traced. */
  const appendedBy = new Map<string, string>();
  /** Callback bodies received, by webhook-id. */
  const received = new Map<string, string>();
  let delivered = 0;

  /** Appends that reached the store, counted so the books look only when there is something new. */
  let appends = 0;
  const counted: EventStore = {
    ...store,
    append: (stream, events, options) =>
      store.append(stream, events, options).finally(() => {
        appends++;
      }),
  };
  const shared: Shared = {
    store: counted,
    views,
    assets,
    bus,
    vendors,
    faultDeps: (node) => ({
      node,
      random: rnd,
      rates: o.rates,
      faults,
      faulty: () => faulty,
      appended: (stream, events, by) => {
        for (const e of events) appendedBy.set(e.id, by.name);
        checkOwner(stream, events, by);
      },
    }),
    async post(node, _url, body, headers) {
      return node.call(async () => {
        const id = headers['webhook-id'] ?? '';
        const taskId = id.replace(/^msg_/, '');
        const parsed = JSON.parse(body) as { status?: string };
        const task = books.tasks.get(taskId);
        const expected = task?.outcome === 'succeeded' ? 'completed' : task?.outcome === 'failed' ? 'failed' : undefined;
        if (parsed.status !== expected) {
          fail(
            new InvariantViolation(
              'callback body older than the event that scheduled it',
              `status ${String(parsed.status)}, the task ${task?.outcome ?? 'unfinished'}`,
              taskId,
            ),
          );
        }
        const before = received.get(id);
        if (before !== undefined && before !== body) fail(new InvariantViolation('callback retry carries another body', `webhook-id ${id}`, taskId));
        received.set(id, body);
        line(`callback ${taskId} ${String(parsed.status)}`);
        if (faulty && random.chance(o.rates.receiverFails)) {
          faults.add('receiverFails');
          return 500;
        }
        delivered++;
        return 200;
      });
    },
    maxAgeSeconds: o.maxAgeSeconds,
    // A hot world's jobs run 5–8 minutes: polled every 5 s, their polls were most of its steps
    // (445,000 for 5,000 tasks) and of its time, and its point is the account's open reservations.
    pollIntervalMs: o.hot ? 30_000 : 5_000,
    reservationGraceSeconds: 60,
    callbackRetryScheduleSeconds: [1, 5, 30, 120, 600],
  };

  /**
   * Work on a task is done by the engine that owns its partition: the dispatcher, poller,
   * settler, sweepers and callback deliverer are scoped to it (the callback scheduler to its own
   * group's owner), so two engines never race on one task's work. A process that lost the
   * partition may still finish what it began while it owned it (its revoke listener runs when it
   * gets to it, as on Kafka): for OWNER_GRACE_MS of its own time after that (a pause stops it:
   * a frozen process resumes where it was, and its fenced lease is what guards that).
   */
  function checkOwner(stream: string, events: readonly NewEvent[], by: SimNode): void {
    if (!by.name.startsWith('engine-')) return;
    for (const e of events) {
      const taskId = taskOf(stream, e);
      if (taskId === undefined) continue;
      const partition = bus.partitionOf(taskId);
      const { owned, revokedAt: revoked } = bus.belief(by, e.type === 'CallbackScheduled' ? CALLBACK_GROUP : ENGINE_GROUP, partition);
      if (owned) continue;
      if (revoked !== undefined && by.awakeMs() - revoked <= OWNER_GRACE_MS) continue;
      fail(
        new InvariantViolation(
          'work on a task by an engine that does not own it',
          `${e.type} by ${by.name}, which does not own partition ${partition}${revoked === undefined ? ' and never did' : ` (revoked ${((by.awakeMs() - revoked) / 1000).toFixed(1)} s of its own time before)`}`,
          taskId,
        ),
      );
    }
  }

  // ---- the processes, and what kills, pauses and restarts them ----
  let generation = 0;
  const allNodes: SimNode[] = [];
  const newNode = (role: string, skew = true) => {
    const node = new SimNode(
      `${role}-${++generation}`,
      rnd,
      nodeOptions,
      skew && o.rates.maxClockSkewMs > 0 ? random.int(-o.rates.maxClockSkewMs, o.rates.maxClockSkewMs) : 0,
    );
    allNodes.push(node);
    return node;
  };
  const live: SimProcess[] = [];
  let projector: (SimProcess & { runner: { position(): bigint } }) | undefined;
  /** The API processes (two front doors: their account writes meet, as several api instances' do). */
  const apis: ApiProcess[] = [];
  const starting = new Set<Promise<unknown>>();
  async function start(role: SimProcess['role']): Promise<void> {
    const node = newNode(role);
    line(`start ${node.name} skew ${node.skewMs} ms`);
    const started = role === 'projector' ? startProjector(shared, node) : role === 'api' ? startApi(shared, node) : startEngine(shared, node);
    starting.add(started);
    try {
      const p = await started;
      if (!node.alive) return;
      live.push(p);
      if (p.role === 'projector') projector = p as typeof projector;
      if (p.role === 'api') apis.push(p as ApiProcess);
    } finally {
      starting.delete(started);
    }
  }
  /** The process is killed at whatever await it is at, and another starts in its place later. */
  function crash(p: SimProcess): void {
    faults.add('crash');
    line(`crash ${p.node.name}`);
    p.node.crash();
    live.splice(live.indexOf(p), 1);
    if (projector === p) projector = undefined;
    if (apis.includes(p as ApiProcess)) apis.splice(apis.indexOf(p as ApiProcess), 1);
    setTimeout(() => bus.expire(p.node), SESSION_TIMEOUT_MS);
    setTimeout(() => void start(p.role), random.int(1_000, 30_000));
  }
  /** Engines frozen mid-submit, by the task they were submitting. */
  const frozenMidSubmit = new Map<string, { node: SimNode; wake: () => void }>();
  /** A pause longer than a session, and often longer than a submit lease. Returns what ends it early. */
  function pause(p: SimProcess, kind: 'pause' | 'pauseMidSubmit' | 'projectorStall', length?: number): () => void {
    faults.add(kind);
    // Pauses reach well past a submit lease and another engine's lease of watching (90 s + 90 s).
    const ms = length ?? (kind === 'pause' ? random.int(1_000, 240_000) : random.int(5_000, 60_000));
    line(`pause ${p.node.name} ${ms} ms`);
    p.node.pause();
    setTimeout(() => {
      if (p.node.state === 'paused') bus.expire(p.node);
    }, SESSION_TIMEOUT_MS);
    let over = false;
    const resume = () => {
      if (over) return;
      over = true;
      line(`resume ${p.node.name}`);
      p.node.resume();
      bus.rejoin(p.node);
    };
    setTimeout(resume, ms);
    return resume;
  }
  const chaos = setInterval(() => {
    if (!faulty) return;
    const up = live.filter((p) => p.node.state === 'up');
    if (up.length > 0 && random.chance(o.rates.crashPerSecond)) crash(random.pick(up));
    // Pauses fall on engines mostly: an engine frozen mid-submit past its lease is what the fence is for.
    const engines = live.filter((p) => p.node.state === 'up' && p.role === 'engine');
    const apisUp = live.filter((p) => p.node.state === 'up' && p.role === 'api');
    // A hot world keeps its front doors: its point is the account with thousands of reservations open.
    const pool = o.hot || random.chance(0.75) ? engines : apisUp;
    // One of a role frozen at a time: the others go on and meet what the frozen one left (with
    // every engine frozen most of the time, tasks would run only once the faults stop).
    if (pool.length > 1 && random.chance(o.rates.pausePerSecond)) pause(random.pick(pool), 'pause');
    if (random.chance(o.rates.rebalancePerSecond)) {
      faults.add('rebalance');
      line('rebalance');
      bus.rebalanceAll();
    }
    if (projector?.node.state === 'up' && random.chance(o.rates.projectorStallPerSecond)) pause(projector, 'projectorStall');
  }, 1000);

  // ---- every committed event goes through the books, in commit order ----
  let seen = 0n;
  let observedAppends = -1;
  async function observe(raw: EventStore): Promise<void> {
    // Only when something was appended since the last look (most steps append nothing).
    if (appends === observedAppends) return;
    observedAppends = appends;
    for (;;) {
      const batch = await raw.readAll({ after: seen, maxCount: OBSERVE_BATCH });
      for (const e of batch) {
        seen = e.position;
        const by = appendedBy.get(e.id);
        appendedBy.delete(e.id);
        const data = e.data as { taskId?: string; reservationId?: string; reason?: string; epoch?: number };
        const detail =
          e.streamName.startsWith('account-') && data.reservationId
            ? ` ${data.taskId ?? ''} ${data.reservationId}${data.reason ? ` (${data.reason})` : ''}`
            : '';
        line(`${e.streamName}#${e.revision} ${e.type}${data.epoch !== undefined ? ` epoch ${data.epoch}` : ''} by ${by ?? '?'}${detail}`);
        try {
          books.observe(e);
        } catch (err) {
          if (err instanceof InvariantViolation) fail(err);
          else throw err;
        }
        if (e.type === 'TaskSucceeded' || e.type === 'TaskFailed') openTasks.delete(taskIdOfStream(e.streamName));
        if (e.type === 'UpstreamSubmitClaimed') {
          ledger.claimed(taskIdOfStream(e.streamName), by);
          wakeFrozenHolder(taskIdOfStream(e.streamName), by);
        }
      }
      // A short batch reached the head: no need to read again to find nothing.
      if (batch.length < OBSERVE_BATCH) return;
    }
  }

  /** Another engine took the lease over: its frozen holder wakes at once, its submit's answer in hand or on its way. */
  function wakeFrozenHolder(taskId: string, claimer: string | undefined): void {
    const frozen = frozenMidSubmit.get(taskId);
    if (!frozen || frozen.node.name === claimer) return;
    frozenMidSubmit.delete(taskId);
    line(`${frozen.node.name} to wake: its lease of ${taskId} taken over by ${claimer ?? '?'}`);
    // Within half a second: while the new holder's own submit is still with the vendor (0.1-3 s).
    setTimeout(frozen.wake, random.int(0, 500));
  }

  let steps = 0;
  const runUntil = async (done: () => boolean, limitMs: number, what: string): Promise<void> => {
    const end = time.elapsedMs() + limitMs;
    while (!violation && !done()) {
      if (time.elapsedMs() > end) {
        fail(new InvariantViolation('world did not settle', `${what} not reached within ${limitMs / 1000} s`, unfinishedSubject()));
        return;
      }
      if (!(await time.step())) throw new Error('no timer left: the world stopped');
      steps++;
      if (appends !== observedAppends) await until(observe(store));
      checkDeadlines();
    }
  };
  const openTasks = new Set<string>();
  const acknowledgedAt = new Map<string, number>();
  const unfinishedSubject = () =>
    [...openTasks][0] ??
    [...books.tasks.values()].find((t) => t.reservation === 'open' || t.reservation === 'none')?.taskId ??
    [...books.accounts.values()].flatMap((a) => [...a.open.values()])[0]?.taskId ??
    `${answered} of ${o.tasks} submits answered, ${starting.size} processes starting`;
  let lastDeadlineCheck = 0;
  let deadlineChecks = 0;
  function checkDeadlines(): void {
    const now = time.elapsedMs();
    if (now - lastDeadlineCheck < 5000) return;
    lastDeadlineCheck = now;
    const nowSeconds = Date.now() / 1000;
    for (const id of openTasks) {
      deadlineChecks++;
      const t = books.tasks.get(id);
      if (t?.outcome) {
        openTasks.delete(id);
        continue;
      }
      const created = t?.createdAt ?? acknowledgedAt.get(id)!;
      if (nowSeconds > created + o.maxAgeSeconds + DEADLINE_SLACK_SECONDS) {
        fail(new InvariantViolation('acknowledged task not final by its deadline', `created ${created}, now ${Math.floor(nowSeconds)}`, id));
      }
    }
  }

  // ---- set up (no faults): prices, two channels, accounts ----
  const admin = newNode('admin', false);
  const until = <T>(work: Promise<T>) => time.until(work);
  await until(start('projector'));
  const adminStore = shared.faultDeps(admin);
  const adminEvents = nodeEventStore(store, adminStore);
  const meta = { at: new Date().toISOString(), correlationId: 'simulation' };
  await until(changePrices(adminEvents, { models: { [MODEL]: { unit: 'image', price: PRICE_PER_IMAGE } }, groupRatios: { default: 1000 } }, meta));
  const channel = (name: string, baseUrl: string, priority: number) =>
    createChannel(
      adminEvents,
      { name, family: 'images', baseUrl, key: 'k', models: [MODEL], modelMapping: {}, groups: ['default'], priority, weight: 1, status: 1 },
      meta,
    );
  await until(channel('vendor with a client reference', 'sim://vendor-with-reference', random.int(0, 1)));
  await until(channel('vendor without one', 'sim://vendor-plain', random.int(0, 1)));
  const adminAccounts = createAccountService({ events: adminEvents, log: pino({ level: 'silent' }) });
  const callers: Caller[] = [];
  for (let a = 0; a < ACCOUNTS; a++) {
    const accountId = `acct${a}`;
    await until(adminAccounts.execute(accountId, { type: 'OpenAccount', data: { accountId, userId: `user${a}`, group: 'default' } }, meta));
    // Some accounts run dry: refusals for insufficient quota are part of the world too.
    const credit = a === 0 && !o.hot ? 4 * PRICE_PER_IMAGE * Math.ceil(o.tasks / 4) : PRICE_PER_IMAGE * 4 * o.tasks;
    await until(adminAccounts.execute(accountId, { type: 'CreditQuota', data: { creditId: `credit${a}`, amount: credit, note: 'simulation' } }, meta));
    callers.push({
      tokenId: `tok${a}`,
      accountId,
      userId: `user${a}`,
      group: 'default',
      modelLimits: [],
      channelId: null,
      remainQuota: Number.MAX_SAFE_INTEGER,
      quotaLimit: 0,
      unlimitedQuota: true,
    });
  }
  await until(start('api'));
  await until(start('api'));
  for (let i = 0; i < o.engines; i++) void start('engine');
  await runUntil(() => starting.size === 0, 600_000, 'start');
  await until(observe(store));

  // ---- the run: submits at their times, faults on ----
  faulty = true;
  let submitted = 0;
  let acknowledged = 0;
  let refused = 0;
  let answered = 0;
  /** A front door that is up, drawn at random; undefined when none is. */
  const frontDoor = (): ApiProcess | undefined => {
    const up = apis.filter((a) => a.node.state === 'up');
    return up.length > 0 ? random.pick(up) : undefined;
  };
  /** A request's answer through `front`, or the dropped connection's error once that process is killed (a client sees no answer). */
  const answeredBy = <T>(front: ApiProcess, request: () => Promise<T>): Promise<T> => {
    const dropped = front.node.crashed().then((): never => {
      throw new Error('the connection dropped: the API process was killed');
    });
    return Promise.race([dropped, request()]);
  };
  /** A client's request through a front door: answered however it ends, refused at once when no front door is up. */
  const throughFrontDoor = async (request: (front: ApiProcess) => Promise<void>): Promise<void> => {
    const front = frontDoor();
    try {
      if (front) await request(front);
      else refused++;
    } finally {
      answered++;
    }
  };
  const submitOne = (i: number): Promise<void> =>
    throughFrontDoor(async (front) => {
      const caller = o.hot ? callers[1]! : random.pick(callers);
      const n = random.int(1, 4);
      const taskId = `task_sim${String(i).padStart(7, '0')}`;
      try {
        await answeredBy(front, () =>
          submitTask(front.deps, {
            family: 'image',
            channelFamily: 'images',
            action: 'anime/generate',
            model: MODEL,
            caller,
            request: { model: MODEL, prompt: `simulated ${i}`, n },
            units: n,
            taskId,
            ...(random.chance(0.5) ? { callbackUrl: `https://receiver.sim.invalid/hook/${i}` } : {}),
            metadata: { at: front.node.clock().toISOString() },
          }),
        );
        acknowledged++;
        // Acknowledged after its end was seen (an answer held by a paused front door): nothing left to wait for.
        if (!books.tasks.get(taskId)?.outcome) openTasks.add(taskId);
        acknowledgedAt.set(taskId, Math.floor(front.node.clock().getTime() / 1000));
        line(`acknowledged ${taskId}`);
      } catch (err) {
        refused++;
        line(`refused ${taskId} ${err instanceof Error ? err.name : 'error'}`);
      }
    });
  /**
   * A synchronous call through a front door: reserved, called, re-hosted and settled in the
   * request, under the same faults (a front door killed or frozen mid-call, store faults). The
   * vendor answers after up to 20 s, now and then past the call's deadline, fails now and then,
   * and reports up to two units more than were asked for (never charged). A call answered with
   * its result must have its task succeeded and settled when the world is drained; a task whose
   * call was cut off is final by its deadline all the same (the reconciler's backstop).
   */
  const syncSucceeded = new Set<string>();
  const syncCalls = { succeeded: 0, failed: 0, unanswered: 0 };
  const syncOne = (i: number): Promise<void> =>
    throughFrontDoor(async (front) => {
      const caller = random.pick(callers);
      const n = random.int(1, 4);
      const call = (): Promise<SyncCallResult> =>
        front.node.call(async () => {
          const late = faulty && random.chance(0.02);
          await new Promise((resolve) => setTimeout(resolve, late ? random.int(290_000, 400_000) : random.int(100, 20_000)));
          if (faulty && random.chance(o.rates.receiverFails)) throw new UpstreamError('the simulated vendor failed the call', random.chance(0.5));
          const units = random.int(1, n + 2);
          return {
            results: Array.from({ length: Math.min(units, n) }, () => ({ kind: 'image' as const, b64: SYNC_IMAGE_B64, contentType: 'image/png' })),
            usage: { units },
          };
        });
      const body = { model: MODEL, prompt: `simulated sync ${i}`, n };
      let taskId: string | undefined;
      try {
        const outcome = await answeredBy(front, () =>
          runSyncTask(
            front.deps,
            {
              family: 'image',
              channelFamily: 'images',
              action: 'generate',
              model: MODEL,
              caller,
              request: body,
              units: n,
              metadata: { at: front.node.clock().toISOString() },
              delivery: 'b64',
              idempotencyKey: undefined,
              body,
              onTask: (id) => {
                taskId = id;
                // From here on the client knows the task id (x-task-id): it must end, answered or not.
                if (!books.tasks.get(id)?.outcome) openTasks.add(id);
                acknowledgedAt.set(id, Math.floor(front.node.clock().getTime() / 1000));
              },
            },
            call,
          ),
        );
        syncCalls.succeeded++;
        syncSucceeded.add(outcome.call.taskId);
        line(`sync answered ${outcome.call.taskId} succeeded`);
      } catch (err) {
        const name = err instanceof Error ? err.name : 'error';
        if (front.node.state === 'crashed') syncCalls.unanswered++;
        else syncCalls.failed++;
        line(`sync ${taskId ?? `call${i}`} answered ${name}`);
      }
    });
  /**
   * An administrator's debit through a front door, now and then: a money path of its own. The
   * console retries with the same `debitId` after a cut-off answer, as a client would, so a debit
   * whose append was ambiguous is asked for again (the books check it applies once and never
   * takes what is reserved). A refusal for insufficient quota is part of the world.
   */
  const debitOne = async (i: number): Promise<void> => {
    const caller = random.pick(callers);
    const debit = { debitId: `debit${i}`, amount: random.int(1, PRICE_PER_IMAGE), reason: 'simulated correction', by: 'admin' };
    for (let attempt = 0; attempt < 3; attempt++) {
      const front = frontDoor();
      if (!front) return;
      try {
        const meta = { at: front.node.clock().toISOString(), accountId: caller.accountId };
        await answeredBy(front, () => front.deps.accounts.execute(caller.accountId, { type: 'DebitQuota', data: debit }, meta));
        line(`debited ${debit.debitId}`);
        return;
      } catch (err) {
        line(`debit ${debit.debitId} ${err instanceof Error ? err.name : 'error'}`);
      }
    }
  };
  const interval = 1000 / o.submitPerSecond;
  const submitter = setInterval(() => {
    if (submitted >= o.tasks) return;
    if (random.chance(DEBIT_CHANCE)) void debitOne(submitted);
    // A hot world's point is one account holding thousands of reservations open: its requests stay submits.
    if (!o.hot && random.chance(SYNC_CHANCE)) void syncOne(submitted++);
    else void submitOne(submitted++);
  }, interval);
  await runUntil(() => submitted >= o.tasks, (o.tasks / o.submitPerSecond) * 1000 + 60_000, 'every submit sent');
  clearInterval(submitter);
  // The faults go on for a while after the last submit: tasks in flight meet them too.
  const faultsUntil = time.elapsedMs() + FAULTS_AFTER_LAST_SUBMIT_MS;
  await runUntil(() => time.elapsedMs() >= faultsUntil, FAULTS_AFTER_LAST_SUBMIT_MS + 1000, 'the end of the faults');

  // ---- drain: faults off, everyone resumed, the world left to finish ----
  faulty = false;
  line('faults off');
  // Paused processes resume when their pause ends (at most 4 minutes): a pause cut short here
  // would never outlast a lease, and the take-overs it causes are what the fence is for.
  const settled = () => answered >= o.tasks && starting.size === 0 && openTasks.size === 0 && books.tasksUnclosed === 0 && books.openReservations === 0;
  await runUntil(settled, (o.maxAgeSeconds + DEADLINE_SLACK_SECONDS + 900) * 1000, 'every task final and every reservation closed');
  clearInterval(chaos);

  // ---- the books closed: the account service's own load, then the audit ----
  if (!violation) await until(closeTheBooks());
  async function closeTheBooks(): Promise<void> {
    const accounts = createAccountService({ events: store, log: pino({ level: 'silent' }) });
    for (const c of callers) {
      const state = await accounts.state(c.accountId);
      const want = books.expected(c.accountId);
      if (state.balance !== want.balance || state.reserved !== want.reserved) {
        fail(
          new InvariantViolation(
            'balance is not credits minus charges',
            `${c.accountId}: loaded balance ${state.balance} reserved ${state.reserved}; expected ${want.balance} / ${want.reserved}`,
            c.accountId,
          ),
        );
      }
    }
    for (const t of books.tasks.values()) {
      const want = t.outcome === 'succeeded' ? 'settled' : 'released';
      if (t.reservation !== want)
        fail(new InvariantViolation('reservation closed the wrong way', `task ${t.outcome ?? 'unfinished'}, reservation ${t.reservation}`, t.taskId));
    }
    for (const taskId of syncSucceeded) {
      const t = books.tasks.get(taskId);
      if (t?.outcome !== 'succeeded' || t.reservation !== 'settled')
        fail(
          new InvariantViolation(
            'synchronous call answered a result its task does not have',
            `answered succeeded; the task ${t?.outcome ?? 'unknown'}, its reservation ${t?.reservation ?? 'unknown'}`,
            taskId,
          ),
        );
    }
    // The views must have caught up before the audit compares them with the replay.
    const head = await store.headPosition();
    while ((projector?.runner.position() ?? 0n) < head) await new Promise((resolve) => setTimeout(resolve, 100));
    const report = await auditAccounts(store, views);
    for (const d of report.discrepancies) fail(new InvariantViolation('audit found a difference', d.differences.join('; '), d.accountId));
  }

  const result: RunResult = {
    seed: o.seed,
    tasks: o.tasks,
    lifecycles: books.tasks.size,
    acknowledged,
    refused,
    succeeded: [...books.tasks.values()].filter((t) => t.outcome === 'succeeded').length,
    failed: [...books.tasks.values()].filter((t) => t.outcome === 'failed').length,
    steps,
    virtualSeconds: Math.round(time.elapsedMs() / 1000),
    eventsChecked: books.eventsSeen,
    invariantChecks: books.checks + deadlineChecks,
    faults: Object.fromEntries(faults.counts),
    windows: Object.fromEntries(ledger.windows),
    extraSubmitCalls: [...vendors.values()].reduce((n, v) => n + [...v.submitsByTask.values()].reduce((m, c) => m + c - 1, 0), 0),
    callbacksDelivered: delivered,
    mostOpen: books.mostOpen,
    debits: books.debits,
    syncCalls,
    traceHash: (traceHash = hash.digest('hex').slice(0, 16)),
  };
  // SIM_DUMP=<file>: the whole trace of the world, for reading a seed beyond its failing task.
  if (process.env.SIM_DUMP) writeFileSync(process.env.SIM_DUMP, trace.join('\n'));
  if (violation) {
    const subject = violation.subject;
    result.violation = {
      invariant: violation.invariant,
      detail: violation.detail,
      subject,
      trace: trace.filter((l) => subject && (l.includes(subject) || l.includes(streams.task(subject)) || /crash|pause|resume|start|rebalance/.test(l))),
    };
  }
  // Nothing of this world may run into the next: every process stops where it is, and its
  // timers go with the clock's reset.
  for (const node of allNodes) node.crash();
  await time.settle();
  time.clock.reset();
  await store.close();
  await views.close();
  return result;
}
