import { describe, expect, it } from 'vitest';
import { fold } from '../../src/domain/decider.js';
import type { EventDataOf } from '../../src/domain/events.js';
import {
  InvalidTaskTransitionError,
  SubmitFencedError,
  decideTask,
  evolveTask,
  initialTaskState,
  taskDecider,
  type KnownTask,
  type TaskCommand,
  type TaskEvent,
  type TaskState,
} from '../../src/domain/task.js';

const submission: EventDataOf<'TaskSubmitted'> = {
  taskId: 't1',
  family: 'vidgen',
  action: 'text2video',
  model: 'vid-1',
  accountId: 'a1',
  tokenId: 'tok1',
  group: 'default',
  channelCandidates: ['ch1', 'ch2'],
  request: { prompt: 'a cat' },
  reservationId: 'res-t1',
  reserved: 500,
  basis: { model: 'vid-1', group: 'default', unit: 'second', unitPrice: 50, groupRatioPermille: 1000, units: 10 },
  createdAt: 1_700_000_000,
};

const submit: TaskCommand = { type: 'SubmitTask', data: submission };
const dispatched = (channelId = 'ch1', upstreamTaskId = 'up-1', attempt = 1): TaskCommand => ({
  type: 'RecordUpstreamSubmitted',
  data: { channelId, upstreamTaskId, attempt },
});
const submitFailed = (channelId = 'ch1', attempt = 1): TaskCommand => ({
  type: 'RecordUpstreamSubmitFailed',
  data: { channelId, reason: 'HTTP 503', retryable: true, attempt },
});
const progress = (status: 'queued' | 'in_progress', value: number, upstream?: Record<string, unknown>): TaskCommand => ({
  type: 'RecordProgress',
  data: { status, progress: value, ...(upstream ? { upstream } : {}) },
});
const complete: TaskCommand = {
  type: 'CompleteTask',
  data: {
    results: [
      { kind: 'video', assetKey: 'assets/t1/0.mp4', contentType: 'video/mp4', durationSeconds: 10 },
      { kind: 'text', text: 'a cat, walking' },
    ],
    usage: { units: 10, tier: '720p' },
    assetsExpireAt: 1_700_007_200,
    completedAt: 1_700_000_100,
  },
};
const fail: TaskCommand = { type: 'FailTask', data: { code: 'upstream_error', reason: 'content policy', completedAt: 1_700_000_090 } };
const expire: TaskCommand = { type: 'ExpireAssets', data: {} };

/** Decides and evolves each command in turn, as the command handler would. */
function run(commands: readonly TaskCommand[], from: TaskState = initialTaskState()): { state: TaskState; events: TaskEvent[] } {
  let state = from;
  const events: TaskEvent[] = [];
  for (const command of commands) {
    const decided = decideTask(command, state);
    for (const event of decided) state = evolveTask(state, event);
    events.push(...decided);
  }
  return { state, events };
}

const stateAfter = (...commands: TaskCommand[]): TaskState => run(commands).state;

function known(state: TaskState): KnownTask {
  if (state.status === 'none') throw new Error('expected a submitted task');
  return state;
}

const states = {
  submitted: () => stateAfter(submit),
  dispatched: () => stateAfter(submit, dispatched()),
  running: () => stateAfter(submit, dispatched(), progress('queued', 0)),
  succeeded: () => stateAfter(submit, dispatched(), progress('in_progress', 50), complete),
  failed: () => stateAfter(submit, fail),
  expired: () => stateAfter(submit, dispatched(), complete, expire),
};

describe('task: submit', () => {
  it('starts with no task', () => {
    expect(initialTaskState()).toEqual({ status: 'none', final: false });
  });

  it('records the submission and keeps what the engine needs', () => {
    const { state, events } = run([submit]);
    expect(events).toEqual([{ type: 'TaskSubmitted', data: submission }]);
    expect(known(state)).toMatchObject({
      status: 'submitted',
      final: false,
      family: 'vidgen',
      model: 'vid-1',
      accountId: 'a1',
      reservationId: 'res-t1',
      reserved: 500,
      channelCandidates: ['ch1', 'ch2'],
      attempts: [],
      channelId: null,
      upstreamTaskId: null,
      progress: 0,
      results: [],
      assetKeys: [],
    });
  });

  it('a submit of an existing task decides nothing, in any state', () => {
    for (const make of Object.values(states)) expect(decideTask(submit, make())).toEqual([]);
  });
});

describe('task: upstream submission', () => {
  it('submitted → dispatched, remembering the channel and the upstream task id', () => {
    const state = known(stateAfter(submit, dispatched('ch2', 'up-9', 2)));
    expect(state).toMatchObject({ status: 'dispatched', channelId: 'ch2', upstreamTaskId: 'up-9' });
    expect(state.attempts).toEqual([{ attempt: 2, channelId: 'ch2', outcome: 'submitted', upstreamTaskId: 'up-9' }]);
  });

  it('records failed attempts and stays submitted, so the next channel can be tried', () => {
    const state = known(stateAfter(submit, submitFailed('ch1', 1), dispatched('ch2', 'up-2', 2)));
    expect(state.status).toBe('dispatched');
    expect(state.attempts).toEqual([
      { attempt: 1, channelId: 'ch1', outcome: 'failed', reason: 'HTTP 503', retryable: true },
      { attempt: 2, channelId: 'ch2', outcome: 'submitted', upstreamTaskId: 'up-2' },
    ]);
  });

  it('recording the same upstream submission again decides nothing, even after the task moved on', () => {
    for (const state of [states.dispatched(), states.running(), states.succeeded()]) {
      expect(decideTask(dispatched(), state)).toEqual([]);
    }
  });

  it('recording the same failed attempt again decides nothing', () => {
    const state = stateAfter(submit, submitFailed('ch1', 1));
    expect(decideTask(submitFailed('ch1', 1), state)).toEqual([]);
    expect(decideTask(submitFailed('ch1', 1), stateAfter(submit, submitFailed('ch1', 1), dispatched('ch2')))).toEqual([]);
  });

  it('refuses a second, different upstream submission once dispatched', () => {
    expect(() => decideTask(dispatched('ch2', 'up-2', 2), states.dispatched())).toThrow(InvalidTaskTransitionError);
    expect(() => decideTask(submitFailed('ch2', 2), states.running())).toThrow(InvalidTaskTransitionError);
  });

  it('refuses upstream outcomes for a finished task', () => {
    expect(() => decideTask(dispatched(), states.failed())).toThrow(InvalidTaskTransitionError);
    expect(() => decideTask(submitFailed(), states.failed())).toThrow(InvalidTaskTransitionError);
  });
});

describe('task: progress', () => {
  it('dispatched → running on the first report', () => {
    const { state, events } = run([submit, dispatched(), progress('queued', 0, { raw: 'QUEUED' })]);
    expect(events.at(-1)).toEqual({ type: 'TaskProgressed', data: { status: 'queued', progress: 0, upstream: { raw: 'QUEUED' } } });
    expect(known(state)).toMatchObject({ status: 'running', upstreamStatus: 'queued', progress: 0 });
  });

  it('is appended only on change: the same status and progress decide nothing', () => {
    const state = stateAfter(submit, dispatched(), progress('in_progress', 40));
    expect(decideTask(progress('in_progress', 40, { raw: 'different snapshot' }), state)).toEqual([]);
    expect(decideTask(progress('in_progress', 41), state)).toHaveLength(1);
  });

  it('a status change alone is a change', () => {
    const state = stateAfter(submit, dispatched(), progress('queued', 0));
    expect(decideTask(progress('in_progress', 0), state)).toEqual([{ type: 'TaskProgressed', data: { status: 'in_progress', progress: 0 } }]);
  });

  it('never goes backwards: lower progress or a return to queued keeps the furthest point', () => {
    const state = stateAfter(submit, dispatched(), progress('in_progress', 60));
    expect(decideTask(progress('in_progress', 40), state)).toEqual([]);
    expect(decideTask(progress('queued', 60), state)).toEqual([]);
    expect(decideTask(progress('queued', 70), state)).toEqual([{ type: 'TaskProgressed', data: { status: 'in_progress', progress: 70 } }]);
  });

  it('refuses progress before the task was submitted or dispatched', () => {
    expect(() => decideTask(progress('queued', 0), initialTaskState())).toThrow(InvalidTaskTransitionError);
    expect(() => decideTask(progress('queued', 0), states.submitted())).toThrow(InvalidTaskTransitionError);
  });

  it('a late report on a finished task decides nothing', () => {
    for (const state of [states.succeeded(), states.failed(), states.expired()]) {
      expect(decideTask(progress('in_progress', 99), state)).toEqual([]);
    }
  });
});

describe('task: completion and failure', () => {
  it('succeeds from submitted (sync call), dispatched or running, keeping results and asset keys', () => {
    for (const state of [states.submitted(), states.dispatched(), states.running()]) {
      const after = known(run([complete], state).state);
      expect(after).toMatchObject({
        status: 'succeeded',
        final: true,
        progress: 100,
        assetKeys: ['assets/t1/0.mp4'],
        usage: { units: 10, tier: '720p' },
        assetsExpireAt: 1_700_007_200,
        completedAt: 1_700_000_100,
      });
      expect(after.results).toHaveLength(2);
    }
  });

  it('fails from submitted, dispatched or running, keeping the code and reason', () => {
    for (const state of [states.submitted(), states.dispatched(), states.running()]) {
      expect(known(run([fail], state).state)).toMatchObject({
        status: 'failed',
        final: true,
        failure: { code: 'upstream_error', reason: 'content policy' },
        completedAt: 1_700_000_090,
      });
    }
  });

  it('a final state is final: completing or failing a finished task decides nothing', () => {
    for (const state of [states.succeeded(), states.failed(), states.expired()]) {
      expect(decideTask(complete, state)).toEqual([]);
      expect(decideTask(fail, state)).toEqual([]);
    }
  });

  it('refuses to complete or fail a task that was never submitted', () => {
    expect(() => decideTask(complete, initialTaskState())).toThrow(InvalidTaskTransitionError);
    expect(() => decideTask(fail, initialTaskState())).toThrow(InvalidTaskTransitionError);
  });
});

describe('task: asset expiry', () => {
  it('succeeded → expired, naming the task assets and emptying the results', () => {
    const { state, events } = run([expire], states.succeeded());
    expect(events).toEqual([{ type: 'AssetsExpired', data: { assetKeys: ['assets/t1/0.mp4'] } }]);
    expect(known(state)).toMatchObject({ status: 'expired', final: true, results: [], assetKeys: [] });
  });

  it('expires the asset keys the command names, when it names them', () => {
    expect(decideTask({ type: 'ExpireAssets', data: { assetKeys: ['k'] } }, states.succeeded())).toEqual([
      { type: 'AssetsExpired', data: { assetKeys: ['k'] } },
    ]);
  });

  it('expiring twice decides nothing', () => {
    expect(decideTask(expire, states.expired())).toEqual([]);
  });

  it('refuses to expire a task that did not succeed', () => {
    for (const state of [initialTaskState(), states.submitted(), states.dispatched(), states.running(), states.failed()]) {
      expect(() => decideTask(expire, state)).toThrow(InvalidTaskTransitionError);
    }
  });
});

describe('task: evolve and fold', () => {
  it('folding the recorded events reproduces the state', () => {
    const { state, events } = run([submit, submitFailed(), dispatched('ch2', 'up-2', 2), progress('queued', 0), progress('in_progress', 30), complete, expire]);
    expect(fold(taskDecider, events)).toEqual(state);
  });

  it('ignores events that do not apply: before submission, after a final state, or of other streams', () => {
    const progressed: TaskEvent = { type: 'TaskProgressed', data: { status: 'queued', progress: 5 } };
    expect(evolveTask(initialTaskState(), progressed)).toEqual(initialTaskState());
    const failed = states.failed();
    expect(evolveTask(failed, progressed)).toEqual(failed);
    expect(evolveTask(failed, { type: 'TaskSucceeded', data: { results: [], usage: { units: 1 }, assetsExpireAt: 0, completedAt: 1 } })).toEqual(failed);
    expect(evolveTask(failed, { type: 'QuotaDebited', data: { debitId: 'd', amount: 1, reason: 'x' } })).toEqual(failed);
    const submitted = states.submitted();
    expect(evolveTask(submitted, { type: 'TaskSubmitted', data: { ...submission, model: 'other' } })).toEqual(submitted);
  });

  it('the error names the state and the command', () => {
    expect(() => decideTask(expire, states.running())).toThrow(expect.objectContaining({ from: 'running', commandType: 'ExpireAssets' }));
  });
});

describe('the submit lease (ClaimUpstreamSubmit)', () => {
  const claim = (owner: string, at: number, attempt = 1, channelId = 'ch1', takeOver?: number): TaskCommand => ({
    type: 'ClaimUpstreamSubmit',
    data: { channelId, attempt, owner, leaseUntil: at + 90, ...(takeOver === undefined ? {} : { takeOver }) },
  });
  const submitted = () => fold(taskDecider, decideTask(submit, initialTaskState()));
  const apply = (state: TaskState, command: TaskCommand) => decideTask(command, state).reduce(evolveTask, state);

  it("a claim on a submitted task is recorded with epoch 1; each claim after it is the next epoch, the same owner's too", () => {
    const claimed = apply(submitted(), claim('a', 1000));
    expect((claimed as KnownTask).claim).toEqual({ channelId: 'ch1', attempt: 1, owner: 'a', leaseUntil: 1090, epoch: 1 });
    // The owner found its own claim still open (its earlier try may have reached the upstream):
    // claiming again is a new epoch, never "already yours" (which let it submit a second time).
    expect(decideTask(claim('a', 1001), claimed)).toEqual([
      { type: 'UpstreamSubmitClaimed', data: { channelId: 'ch1', attempt: 1, owner: 'a', leaseUntil: 1091, epoch: 2 } },
    ]);
  });

  it("another owner's claim is refused, whatever the clocks say, until the claimer has watched that epoch run out", () => {
    const claimed = apply(submitted(), claim('a', 1000));
    // A claimer whose clock is far ahead of the holder's is still refused: no clock is compared.
    expect(() => decideTask(claim('b', 999_999), claimed)).toThrow(expect.objectContaining({ name: 'UpstreamSubmitClaimedError', owner: 'a', epoch: 1 }));
    // Watched out: another epoch than the open one takes nothing over.
    expect(() => decideTask(claim('b', 1100, 1, 'ch1', 7), claimed)).toThrow(/claimed by a \(epoch 1\)/);
    expect(decideTask(claim('b', 1100, 1, 'ch1', 1), claimed)).toEqual([
      { type: 'UpstreamSubmitClaimed', data: { channelId: 'ch1', attempt: 1, owner: 'b', leaseUntil: 1190, epoch: 2 } },
    ]);
  });

  it('a recorded submit ends the lease, and the task can no longer be claimed', () => {
    const done = apply(apply(submitted(), claim('a', 1000)), dispatched());
    expect((done as KnownTask).claim).toBeNull();
    expect(() => decideTask(claim('b', 1001), done)).toThrow(InvalidTaskTransitionError);
  });

  it('a recorded failure ends the lease: the holder or another instance claims the next channel', () => {
    const failed = apply(apply(submitted(), claim('a', 1000)), {
      type: 'RecordUpstreamSubmitFailed',
      data: { channelId: 'ch1', reason: 'down', retryable: true, attempt: 1, epoch: 1 },
    });
    expect((failed as KnownTask).claim).toBeNull();
    expect(decideTask(claim('b', 1001, 2, 'ch2'), failed)).toEqual([
      { type: 'UpstreamSubmitClaimed', data: { channelId: 'ch2', attempt: 2, owner: 'b', leaseUntil: 1091, epoch: 2 } },
    ]);
  });

  it('streams written before leases existed fold with no claim', () => {
    expect((submitted() as KnownTask).claim).toBeNull();
  });

  it('claims recorded without an epoch (earlier versions) get their ordinal: the next claim goes on from there', () => {
    const old = (owner: string, leaseUntil: number) => ({ type: 'UpstreamSubmitClaimed' as const, data: { channelId: 'ch1', attempt: 1, owner, leaseUntil } });
    const state = fold(taskDecider, [...decideTask(submit, initialTaskState()), old('a', 1090), old('b', 1190)]) as KnownTask;
    expect(state.claim).toMatchObject({ owner: 'b', epoch: 2 });
    expect(decideTask(claim('b', 1200), state)).toEqual([expect.objectContaining({ data: expect.objectContaining({ epoch: 3 }) })]);
    // Its holder (an earlier version) records without an epoch: accepted as before.
    expect(decideTask(dispatched(), state)).toEqual([{ type: 'UpstreamSubmitted', data: { channelId: 'ch1', upstreamTaskId: 'up-1', attempt: 1 } }]);
  });
});

describe('fencing: an outcome is recorded only under the claim still open (epoch)', () => {
  const claim = (owner: string, takeOver?: number): TaskCommand => ({
    type: 'ClaimUpstreamSubmit',
    data: { channelId: 'ch1', attempt: 1, owner, leaseUntil: 1090, ...(takeOver === undefined ? {} : { takeOver }) },
  });
  const recorded = (epoch: number, upstreamTaskId = 'up-1'): TaskCommand => ({
    type: 'RecordUpstreamSubmitted',
    data: { channelId: 'ch1', upstreamTaskId, attempt: 1, epoch },
  });
  const failedUnder = (epoch: number): TaskCommand => ({
    type: 'RecordUpstreamSubmitFailed',
    data: { channelId: 'ch1', reason: 'HTTP 503', retryable: true, attempt: 1, epoch },
  });
  const apply = (state: TaskState, ...commands: TaskCommand[]) => commands.reduce((s, c) => decideTask(c, s).reduce(evolveTask, s), state);
  const submitted = () => fold(taskDecider, decideTask(submit, initialTaskState()));
  /** `a` claimed (epoch 1), paused past its lease; `b` watched it run out and claimed (epoch 2). */
  const takenOver = () => apply(submitted(), claim('a'), claim('b', 1));

  it('the holder of the open claim records its submit, with the epoch', () => {
    expect(decideTask(recorded(1), apply(submitted(), claim('a')))).toEqual([
      { type: 'UpstreamSubmitted', data: { channelId: 'ch1', upstreamTaskId: 'up-1', attempt: 1, epoch: 1 } },
    ]);
  });

  it('a paused ex-holder cannot record its submit over the new holder', () => {
    expect(() => decideTask(recorded(1, 'up-of-a'), takenOver())).toThrow(SubmitFencedError);
    expect(() => decideTask(recorded(1, 'up-of-a'), takenOver())).toThrow(
      expect.objectContaining({ epoch: 1, current: expect.objectContaining({ owner: 'b', epoch: 2 }) }),
    );
    expect(decideTask(recorded(2, 'up-of-b'), takenOver())).toHaveLength(1);
  });

  it('nor its failure', () => {
    expect(() => decideTask(failedUnder(1), takenOver())).toThrow(SubmitFencedError);
    expect(decideTask(failedUnder(2), takenOver())).toHaveLength(1);
  });

  it('nor anything once the new holder has recorded its submit; the same record again decides nothing', () => {
    const done = apply(takenOver(), recorded(2, 'up-of-b'));
    expect(() => decideTask(recorded(1, 'up-of-a'), done)).toThrow(SubmitFencedError);
    expect(decideTask(recorded(2, 'up-of-b'), done)).toEqual([]);
  });

  it('a claim of its own taken again (its memory lost) fences the earlier try of the same owner', () => {
    const again = apply(submitted(), claim('a'), claim('a'));
    expect(() => decideTask(recorded(1), again)).toThrow(SubmitFencedError);
    expect(decideTask(recorded(2), again)).toHaveLength(1);
  });

  it('a task that ended under an open claim refuses the late record as before', () => {
    const ended = apply(submitted(), claim('a'), fail);
    expect(() => decideTask(recorded(1), ended)).toThrow(InvalidTaskTransitionError);
  });

  it('outcomes without an epoch (synchronous calls take no lease) are not fenced', () => {
    expect(decideTask(dispatched(), takenOver())).toHaveLength(1);
    expect(decideTask(submitFailed(), takenOver())).toHaveLength(1);
  });
});
