/**
 * The task aggregate (stream `task-<taskId>`), one per task, sync calls included:
 *
 *   none → submitted → dispatched → running → succeeded → expired
 *                  ╰───────────┴─────────┴──→ failed
 *
 * `dispatched` follows UpstreamSubmitted, `running` the first TaskProgressed. A final state is
 * final: completing, failing or reporting progress on a finished task decides `[]`, so late
 * poll results and retried commands are absorbed.
 */
import { assertNever, type Command, type Decider } from './decider.js';
import type { DomainEvent, EventDataOf, EventOf, TaskResultItem } from './events.js';

export type TaskEvent = EventOf<
  'TaskSubmitted' | 'UpstreamSubmitClaimed' | 'UpstreamSubmitted' | 'UpstreamSubmitFailed' | 'TaskProgressed' | 'TaskSucceeded' | 'TaskFailed' | 'AssetsExpired'
>;

export type TaskLifecycle = 'submitted' | 'dispatched' | 'running' | 'succeeded' | 'failed' | 'expired';
export type UpstreamStatus = EventDataOf<'TaskProgressed'>['status'];
export type TaskUsage = EventDataOf<'TaskSucceeded'>['usage'];

/** One try at submitting upstream, kept so the dispatcher skips channels already tried. */
export type UpstreamAttempt = Readonly<
  { attempt: number; channelId: string } & ({ outcome: 'submitted'; upstreamTaskId: string } | { outcome: 'failed'; reason: string; retryable: boolean })
>;

export type NoTask = Readonly<{ status: 'none'; final: false }>;

/** Everything TaskSubmitted carried (family, model, account, reservation, candidates, ...) plus the life cycle. */
export type KnownTask = Readonly<
  EventDataOf<'TaskSubmitted'> & {
    status: TaskLifecycle;
    final: boolean;
    attempts: readonly UpstreamAttempt[];
    channelId: string | null;
    upstreamTaskId: string | null;
    upstreamStatus: UpstreamStatus | null;
    progress: number;
    results: readonly TaskResultItem[];
    assetKeys: readonly string[];
    usage: TaskUsage | null;
    failure: Readonly<{ code: string; reason: string }> | null;
    assetsExpireAt: number | null;
    completedAt: number | null;
    /** The open lease on submitting upstream (UpstreamSubmitClaimed), until the submit is recorded. */
    claim: SubmitClaim | null;
    /** Claims taken on this task so far: the epoch of the latest one (0: none). */
    claims: number;
  }
>;

/** A submit lease with its fencing token (`epoch`, derived for claims recorded without one). */
export type SubmitClaim = Readonly<EventDataOf<'UpstreamSubmitClaimed'> & { epoch: number }>;

export type TaskState = NoTask | KnownTask;

export type SubmitTask = Command<'SubmitTask', EventDataOf<'TaskSubmitted'>>;
/**
 * The epoch is the decider's to give. `takeOver`: the epoch of another owner's open claim that
 * the claimer has itself watched, unchanged, for a whole lease on its own clock; that claim alone
 * may be taken over (no clock of one instance is compared with another's).
 */
export type ClaimUpstreamSubmit = Command<'ClaimUpstreamSubmit', Omit<EventDataOf<'UpstreamSubmitClaimed'>, 'epoch'> & { takeOver?: number }>;
export type RecordUpstreamSubmitted = Command<'RecordUpstreamSubmitted', EventDataOf<'UpstreamSubmitted'>>;
export type RecordUpstreamSubmitFailed = Command<'RecordUpstreamSubmitFailed', EventDataOf<'UpstreamSubmitFailed'>>;
export type RecordProgress = Command<'RecordProgress', EventDataOf<'TaskProgressed'>>;
export type CompleteTask = Command<'CompleteTask', EventDataOf<'TaskSucceeded'>>;
export type FailTask = Command<'FailTask', EventDataOf<'TaskFailed'>>;
/** Without `assetKeys`, every asset the task still holds expires. */
export type ExpireAssets = Command<'ExpireAssets', { assetKeys?: string[] }>;
export type TaskCommand =
  SubmitTask | ClaimUpstreamSubmit | RecordUpstreamSubmitted | RecordUpstreamSubmitFailed | RecordProgress | CompleteTask | FailTask | ExpireAssets;

export class InvalidTaskTransitionError extends Error {
  constructor(
    readonly from: TaskState['status'],
    readonly commandType: TaskCommand['type'],
  ) {
    super(`${commandType} is not allowed when the task is ${from}`);
    this.name = 'InvalidTaskTransitionError';
  }
}

/** Another instance holds the lease on submitting this task upstream: leave the task to it. */
export class UpstreamSubmitClaimedError extends Error {
  constructor(
    readonly owner: string,
    readonly leaseUntil: number,
    readonly epoch: number,
  ) {
    super(`the upstream submit is claimed by ${owner} (epoch ${epoch}) until ${new Date(leaseUntil * 1000).toISOString()}`);
    this.name = 'UpstreamSubmitClaimedError';
  }
}

/**
 * A submit outcome made under a claim that is no longer the task's open one: another claim
 * (another instance, or this one after losing its memory) has replaced it, or the outcome of this
 * claim is already recorded. The ex-holder records nothing; whatever upstream job it got is not
 * the task's.
 */
export class SubmitFencedError extends Error {
  constructor(
    readonly epoch: number,
    readonly current: SubmitClaim | null,
  ) {
    super(
      current
        ? `the submit lease of epoch ${epoch} was replaced by epoch ${current.epoch} (${current.owner})`
        : `the submit lease of epoch ${epoch} is no longer open`,
    );
    this.name = 'SubmitFencedError';
  }
}

// ---- decide ----

export function initialTaskState(): TaskState {
  return { status: 'none', final: false };
}

export function decideTask(command: TaskCommand, state: TaskState): TaskEvent[] {
  if (command.type === 'SubmitTask') {
    return state.status === 'none' ? [{ type: 'TaskSubmitted', data: { ...command.data } }] : [];
  }
  if (state.status === 'none') throw new InvalidTaskTransitionError('none', command.type);
  switch (command.type) {
    case 'ClaimUpstreamSubmit':
      return claimUpstreamSubmit(command, state);
    case 'RecordUpstreamSubmitted':
      return recordUpstreamSubmitted(command, state);
    case 'RecordUpstreamSubmitFailed':
      return recordUpstreamSubmitFailed(command, state);
    case 'RecordProgress':
      return recordProgress(command, state);
    case 'CompleteTask':
      return state.final ? [] : [{ type: 'TaskSucceeded', data: { ...command.data } }];
    case 'FailTask':
      return state.final ? [] : [{ type: 'TaskFailed', data: { ...command.data } }];
    case 'ExpireAssets':
      return expireAssets(command, state);
    default:
      return assertNever(command, 'task command');
  }
}

/**
 * Every claim is a new epoch, the same owner's too: an owner that finds its own claim still open
 * does not know whether its earlier try reached the upstream (the dispatcher records an answer it
 * still holds instead of claiming; without one it claims anew and submits with the same client
 * reference). Another owner's open claim is refused unless it is the one the claimer watched run out.
 */
function claimUpstreamSubmit(command: ClaimUpstreamSubmit, task: KnownTask): TaskEvent[] {
  const { takeOver, ...claim } = command.data;
  if (task.status !== 'submitted') throw new InvalidTaskTransitionError(task.status, command.type);
  const held = task.claim;
  if (held && held.owner !== claim.owner && held.epoch !== takeOver) throw new UpstreamSubmitClaimedError(held.owner, held.leaseUntil, held.epoch);
  return [{ type: 'UpstreamSubmitClaimed', data: { ...claim, epoch: task.claims + 1 } }];
}

/** An outcome made under a lease must be of the claim still open (no epoch: no lease, a synchronous call). */
function fence(task: KnownTask, epoch: number | undefined): void {
  if (epoch !== undefined && task.claim?.epoch !== epoch) throw new SubmitFencedError(epoch, task.claim);
}

function recordUpstreamSubmitted(command: RecordUpstreamSubmitted, task: KnownTask): TaskEvent[] {
  const { channelId, upstreamTaskId, epoch } = command.data;
  if (task.channelId === channelId && task.upstreamTaskId === upstreamTaskId) return [];
  fence(task, epoch);
  if (task.status !== 'submitted') throw new InvalidTaskTransitionError(task.status, command.type);
  return [{ type: 'UpstreamSubmitted', data: { ...command.data } }];
}

function recordUpstreamSubmitFailed(command: RecordUpstreamSubmitFailed, task: KnownTask): TaskEvent[] {
  const { channelId, attempt, epoch } = command.data;
  const recorded = task.attempts.some((a) => a.outcome === 'failed' && a.channelId === channelId && a.attempt === attempt);
  if (recorded) return [];
  fence(task, epoch);
  if (task.status !== 'submitted') throw new InvalidTaskTransitionError(task.status, command.type);
  return [{ type: 'UpstreamSubmitFailed', data: { ...command.data } }];
}

/**
 * Appended only on change. Progress and status never go backwards: an upstream that flaps
 * from in_progress to queued, or reports 40 after 60, keeps the furthest point reached.
 */
function recordProgress(command: RecordProgress, task: KnownTask): TaskEvent[] {
  if (task.final) return [];
  if (task.status !== 'dispatched' && task.status !== 'running') {
    throw new InvalidTaskTransitionError(task.status, command.type);
  }
  const status = task.upstreamStatus === 'in_progress' ? 'in_progress' : command.data.status;
  const progress = Math.max(task.progress, command.data.progress);
  if (status === task.upstreamStatus && progress === task.progress) return [];
  const { upstream } = command.data;
  return [{ type: 'TaskProgressed', data: { status, progress, ...(upstream ? { upstream } : {}) } }];
}

function expireAssets(command: ExpireAssets, task: KnownTask): TaskEvent[] {
  if (task.status === 'expired') return [];
  if (task.status !== 'succeeded') throw new InvalidTaskTransitionError(task.status, command.type);
  return [{ type: 'AssetsExpired', data: { assetKeys: [...(command.data.assetKeys ?? task.assetKeys)] } }];
}

// ---- evolve ----

/** Never throws on a recorded event: events that do not apply (or other streams') are ignored. */
export function evolveTask(state: TaskState, event: DomainEvent): TaskState {
  if (event.type === 'TaskSubmitted') return state.status === 'none' ? submittedTask(event.data) : state;
  if (state.status === 'none') return state;
  switch (event.type) {
    case 'UpstreamSubmitClaimed': {
      // Counted whatever the state, so a claim's epoch is its ordinal among the stream's claims.
      const claims = state.claims + 1;
      return { ...state, claims, claim: state.status === 'submitted' ? { ...event.data, epoch: event.data.epoch ?? claims } : state.claim };
    }
    case 'UpstreamSubmitted': {
      const { channelId, upstreamTaskId, attempt } = event.data;
      return {
        ...state,
        claim: null,
        status: state.status === 'submitted' ? 'dispatched' : state.status,
        channelId,
        upstreamTaskId,
        attempts: [...state.attempts, { attempt, channelId, outcome: 'submitted', upstreamTaskId }],
      };
    }
    case 'UpstreamSubmitFailed': {
      const { channelId, attempt, reason, retryable } = event.data;
      return { ...state, claim: null, attempts: [...state.attempts, { attempt, channelId, outcome: 'failed', reason, retryable }] };
    }
    case 'TaskProgressed':
      if (state.final) return state;
      return { ...state, status: 'running', upstreamStatus: event.data.status, progress: event.data.progress };
    case 'TaskSucceeded': {
      if (state.final) return state;
      const { results, usage, assetsExpireAt, completedAt } = event.data;
      const assetKeys = results.flatMap((item) => (item.assetKey === undefined ? [] : [item.assetKey]));
      return { ...state, status: 'succeeded', final: true, progress: 100, results, assetKeys, usage, assetsExpireAt, completedAt };
    }
    case 'TaskFailed': {
      if (state.final) return state;
      const { code, reason, completedAt } = event.data;
      return { ...state, status: 'failed', final: true, failure: { code, reason }, completedAt };
    }
    case 'AssetsExpired':
      // Results point at re-hosted bytes that are now deleted, so they go with them.
      return state.status === 'succeeded' ? { ...state, status: 'expired', results: [], assetKeys: [] } : state;
    default:
      return state;
  }
}

function submittedTask(data: EventDataOf<'TaskSubmitted'>): KnownTask {
  return {
    ...data,
    status: 'submitted',
    final: false,
    attempts: [],
    channelId: null,
    upstreamTaskId: null,
    upstreamStatus: null,
    progress: 0,
    results: [],
    assetKeys: [],
    usage: null,
    failure: null,
    assetsExpireAt: null,
    completedAt: null,
    claim: null,
    claims: 0,
  };
}

export const taskDecider: Decider<TaskState, TaskCommand, TaskEvent> = {
  decide: decideTask,
  evolve: evolveTask,
  initialState: initialTaskState,
};
