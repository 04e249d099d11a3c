/**
 * The upstream vendors of a simulation: stateful, so a second submit of one task is seen and
 * counted (a vendor bills every job it runs). Each vendor remembers every job it created, by
 * its own id, and counts every submit call by the gateway's task id. A vendor with `clientReference` honours the submit's
 * client reference (the `Idempotency-Key` the adapters send, `submitReference`), as this
 * gateway's own routes do: the same key answers the job it already has instead of creating another.
 *
 * What a vendor may do to a task, drawn from the run's seed: accept a submit and never answer
 * it (the call times out), refuse a submit with a passing error, fail polls, answer late,
 * forget the task, fail it, return more results than asked, report results and then forget
 * them, or never finish.
 */
import { SUBMIT_LEASE_SECONDS } from '../src/engine/dispatch/dispatcher.js';
import { UpstreamError, type UpstreamAdapter, type UpstreamContext, type UpstreamStatus } from '../src/engine/channels/upstream.js';
import type { FaultCounts, FaultRates } from './faults.js';
import type { SimNode } from './node.js';
import type { Random } from './random.js';
import { InvariantViolation } from './invariants.js';

/** The submit timeout of the real adapters (upstream-http.ts): a call that never answers fails then. */
const UPSTREAM_TIMEOUT_MS = 30_000;
/** A one-pixel PNG: the bytes of every result. */
const PNG_B64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

interface Job {
  id: string;
  taskId: string;
  asked: number;
  createdAt: number;
  readyAt: number;
  outcome: 'succeed' | 'fail' | 'lose' | 'never' | 'vanish';
  overDeliver: number;
  /** Set once a success was reported for a job whose results then vanish. */
  reported: boolean;
}

export interface VendorOptions {
  name: string;
  /** How long a job runs, milliseconds (drawn between the two). */
  durationMs: readonly [number, number];
  /** Whether the vendor deduplicates submits by the gateway's task id. */
  clientReference: boolean;
}

/**
 * Every job of every vendor by gateway task. A second job for one task is allowed only in a
 * named window, when no earlier job's answer is held by a running process: the submit was never
 * answered (the call timed out, or its process was killed or paused before the answer came), or
 * the process that got the answer was killed, or paused past its lease, before recording it. A
 * second job while a running process holds the first one's answer is a violation.
 */
export class UpstreamLedger {
  private readonly jobs = new Map<string, { jobId: string; createdAt: number; issuedAt: number }[]>();
  /** Every submit call by gateway task: when it reached a vendor, and from which process. */
  private readonly calls = new Map<string, { issuedAt: number; by: SimNode | undefined }[]>();
  /** Every submit claim committed, by gateway task: when, and by which process (by name). */
  private readonly claims = new Map<string, { at: number; by: string | undefined }[]>();
  /** The process each job's submit was answered to. */
  private readonly answeredTo = new Map<string, SimNode>();
  readonly windows = new Map<string, number>();
  onViolation: (v: InvariantViolation) => void = () => undefined;

  /**
   * `submitter`: the process whose call created the job; `issuedAt`: when its call reached the
   * vendor (a vendor takes a while to accept: a holder frozen when the call came in and resumed
   * since was frozen past its lease, not running, when the decision to submit again was made).
   */
  created(taskId: string, jobId: string, submitter: SimNode | undefined, issuedAt: number): void {
    const before = this.jobs.get(taskId) ?? [];
    if (before.length > 0) {
      const holders = before.map((j) => this.answeredTo.get(j.jobId));
      // Frozen when this call came in, or when another process's later call did (its lease had
      // been taken over by then, whether or not that call made a job): resumed since, it holds
      // an answer it may no longer record (fenced).
      const calls = this.calls.get(taskId) ?? [];
      const claims = this.claims.get(taskId) ?? [];
      const frozenPast = (n: SimNode, i: number) =>
        n.lastResumedAt >= issuedAt ||
        calls.some((c) => c.by !== n && c.issuedAt >= before[i]!.createdAt && n.lastResumedAt >= c.issuedAt) ||
        claims.some((c) => c.by !== n.name && c.at >= before[i]!.createdAt && n.lastResumedAt >= c.at) ||
        // Its lease ran out while it was frozen (from its own claim, or from its call when no
        // claim of its own is known): whoever claims after that may take it over.
        n.wasPausedAt((claims.filter((c) => c.by === n.name && c.at <= before[i]!.issuedAt).at(-1)?.at ?? before[i]!.issuedAt) + SUBMIT_LEASE_SECONDS * 1000);
      const running = holders.find((n, i) => n?.state === 'up' && !frozenPast(n, i));
      // A holder frozen before its call went out, resumed after another took its lease over (a
      // job made, or another process's call in): its call still goes out (no upstream fences
      // it), and its record is fenced — the window counted as an orphaned job.
      const staleHolder =
        submitter !== undefined &&
        (submitter.lastResumedAt >= before[0]!.createdAt || calls.some((c) => c.by !== submitter && submitter.lastResumedAt >= c.issuedAt));
      const window = staleHolder
        ? 'holder resumed past its lease, submitted again'
        : running
          ? undefined
          : holders.some((n) => n?.state === 'crashed')
            ? 'answered process killed before recording, submitted again'
            : holders.some((n, i) => n?.state === 'paused' || (n?.state === 'up' && frozenPast(n, i)))
              ? 'answered process paused past its lease, submitted again'
              : 'submit answer lost, submitted again';
      if (window === undefined) {
        this.onViolation(
          new InvariantViolation(
            'second upstream job for a task',
            `job ${jobId} after ${before.map((j) => j.jobId).join(', ')}, whose answer ${running!.name} holds`,
            taskId,
          ),
        );
      } else this.windows.set(window, (this.windows.get(window) ?? 0) + 1);
    }
    before.push({ jobId, createdAt: Date.now(), issuedAt });
    this.jobs.set(taskId, before);
  }

  /** A claim on `taskId` was committed now, by `by` (a holder frozen then, or when its own lease ran out, has lost it). */
  claimed(taskId: string, by: string | undefined): void {
    const claims = this.claims.get(taskId) ?? [];
    claims.push({ at: Date.now(), by });
    this.claims.set(taskId, claims);
  }

  /** A submit call for `taskId` reached a vendor (a job made or found for it, or none). */
  called(taskId: string, by: SimNode | undefined): void {
    const calls = this.calls.get(taskId) ?? [];
    calls.push({ issuedAt: Date.now(), by });
    this.calls.set(taskId, calls);
  }

  /** The submit that created (or found) `jobId` was answered to `node`, running. */
  answered(jobId: string, node: SimNode): void {
    this.answeredTo.set(jobId, node);
  }
}

export interface UpstreamDeps {
  ledger: UpstreamLedger;
  /** Told when a process's submit call has reached the vendor (the world may freeze it there). */
  submitArrived?: (submitter: SimNode, taskId: string) => void;
  random: () => Random;
  rates: FaultRates;
  faults: FaultCounts;
  faulty: () => boolean;
}

export class SimVendor {
  readonly jobs = new Map<string, Job>();
  /** The job made for each client reference (a vendor that honours one). */
  private readonly byReference = new Map<string, Job>();
  /** Submit calls received per gateway task id, created or not. */
  readonly submitsByTask = new Map<string, number>();
  private next = 0;

  constructor(
    readonly options: VendorOptions,
    private readonly d: UpstreamDeps,
  ) {}

  private fault(kind: keyof FaultRates): boolean {
    if (!this.d.faulty() || !this.d.random().chance(this.d.rates[kind])) return false;
    this.d.faults.add(kind);
    return true;
  }

  async submit(task: UpstreamContext['task'], idempotencyKey: string | undefined, submitter?: SimNode): Promise<{ upstreamTaskId: string }> {
    const taskId = task.taskId;
    this.submitsByTask.set(taskId, (this.submitsByTask.get(taskId) ?? 0) + 1);
    const issuedAt = Date.now();
    this.d.ledger.called(taskId, submitter);
    if (submitter) this.d.submitArrived?.(submitter, taskId);
    // A vendor takes a while to accept a job, as real ones do (a tenth of a second to three).
    await sleep(this.d.random().int(SUBMIT_LATENCY_MS[0], SUBMIT_LATENCY_MS[1]));
    if (this.fault('upstreamAnswersLate')) await sleep(this.d.random().int(5_000, 25_000));
    if (this.fault('upstreamSubmitFails')) throw new UpstreamError(`${this.options.name}: 503 try again`, true, 503);
    // A vendor with a client reference answers a key it has seen with the job it made for it.
    const existing = this.options.clientReference && idempotencyKey ? this.byReference.get(idempotencyKey) : undefined;
    const job = existing ?? this.create(task, submitter, issuedAt);
    if (this.options.clientReference && idempotencyKey) this.byReference.set(idempotencyKey, job);
    if (this.fault('upstreamAcceptThenTimeout')) {
      await sleep(UPSTREAM_TIMEOUT_MS);
      throw new UpstreamError(`submit: no answer within ${UPSTREAM_TIMEOUT_MS} ms`, true);
    }
    return { upstreamTaskId: job.id };
  }

  private create(task: UpstreamContext['task'], submitter: SimNode | undefined, issuedAt: number): Job {
    const r = this.d.random();
    const id = `${this.options.name}-${++this.next}`;
    const now = Date.now();
    const outcome = this.fault('upstreamNeverFinishes')
      ? 'never'
      : this.fault('upstreamLosesTask')
        ? 'lose'
        : this.fault('upstreamTaskFails')
          ? 'fail'
          : this.fault('upstreamResultsVanish')
            ? 'vanish'
            : 'succeed';
    const asked = typeof task.request.n === 'number' ? task.request.n : 1;
    const job: Job = {
      id,
      taskId: task.taskId,
      asked,
      createdAt: now,
      readyAt: now + r.int(this.options.durationMs[0], this.options.durationMs[1]),
      outcome,
      overDeliver: this.fault('upstreamOverDelivers') ? r.int(1, 3) : 0,
      reported: false,
    };
    this.jobs.set(id, job);
    this.d.ledger.created(task.taskId, id, submitter, issuedAt);
    return job;
  }

  answered(jobId: string, node: SimNode): void {
    this.d.ledger.answered(jobId, node);
  }

  async poll(upstreamTaskId: string): Promise<UpstreamStatus> {
    if (this.fault('upstreamAnswersLate')) await sleep(this.d.random().int(5_000, 25_000));
    if (this.fault('upstreamPollFails')) throw new UpstreamError(`${this.options.name}: 502 bad gateway`, true, 502);
    const job = this.jobs.get(upstreamTaskId);
    if (!job) return { state: 'lost', reason: 'the upstream no longer knows the task' };
    const now = Date.now();
    if (now < job.readyAt || job.outcome === 'never') {
      // In quarters, as many vendors report it: each change is an event, and none moves money.
      const fraction = (now - job.createdAt) / Math.max(1, job.readyAt - job.createdAt);
      const progress = Math.min(75, Math.floor(fraction * 4) * 25);
      return { state: progress > 0 ? 'in_progress' : 'queued', progress };
    }
    switch (job.outcome) {
      case 'lose':
        return { state: 'lost', reason: 'the upstream no longer knows the task' };
      case 'fail':
        return { state: 'failed', code: 'upstream_failed', reason: 'the simulated vendor failed the task' };
      case 'vanish':
        if (job.reported) return { state: 'lost', reason: 'the results are gone' };
        job.reported = true;
        return this.succeeded(job);
      default:
        return this.succeeded(job);
    }
  }

  private succeeded(job: Job): UpstreamStatus {
    const count = job.asked + job.overDeliver;
    return {
      state: 'succeeded',
      results: Array.from({ length: count }, () => ({ kind: 'image' as const, b64: PNG_B64, contentType: 'image/png' })),
      usage: { units: count },
    };
  }
}

/** How long a vendor takes to accept a submit, when nothing goes wrong. */
const SUBMIT_LATENCY_MS = [100, 3_000] as const;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The adapter of the `images` channel family as process `node` runs it, speaking to the vendors by base URL. */
export function simUpstreamAdapter(vendors: ReadonlyMap<string, SimVendor>, node: SimNode, maxAgeSeconds: number, pollIntervalMs: number): UpstreamAdapter {
  const vendorOf = (ctx: UpstreamContext) => {
    const vendor = vendors.get(ctx.baseUrl);
    if (!vendor) throw new UpstreamError(`no vendor at ${ctx.baseUrl}`, false);
    return vendor;
  };
  /** A call from a process: it waits at the process's gates, and a killed process never hears the answer. */
  const call = <T>(ctx: UpstreamContext, fn: () => Promise<T>): Promise<T> =>
    node.call(() => {
      if (ctx.signal?.aborted) throw ctx.signal.reason;
      return fn();
    });
  return {
    family: 'images',
    delivery: () => 'url',
    pollIntervalMs,
    maxAgeSeconds,
    async submit(ctx) {
      const answer = await call(ctx, () => vendorOf(ctx).submit(ctx.task, ctx.idempotencyKey, node));
      vendorOf(ctx).answered(answer.upstreamTaskId, node);
      return answer;
    },
    poll: (ctx) => call(ctx, () => vendorOf(ctx).poll(ctx.upstreamTaskId)),
  };
}
