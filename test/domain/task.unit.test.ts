import { describe, expect, it } from 'vitest';
import { fold } from '../../src/domain/decider.js';
import type { EventDataOf } from '../../src/domain/events.js';
import {
  InvalidTaskTransitionError,
  decideTask,
  evolveTask,
  foldTask,
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
    expect(foldTask(events)).toEqual(state);
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
  const claim = (owner: string, at: number, attempt = 1, channelId = 'ch1'): TaskCommand => ({
    type: 'ClaimUpstreamSubmit',
    data: { channelId, attempt, owner, leaseUntil: at + 90, at },
  });
  const submitted = () => foldTask(decideTask(submit, initialTaskState()));
  const apply = (state: TaskState, command: TaskCommand) => decideTask(command, state).reduce(evolveTask, state);

  it('a claim on a submitted task is recorded; the same claim again decides nothing', () => {
    const claimed = apply(submitted(), claim('a', 1000));
    expect((claimed as KnownTask).claim).toEqual({ channelId: 'ch1', attempt: 1, owner: 'a', leaseUntil: 1090 });
    expect(decideTask(claim('a', 1001), claimed)).toEqual([]);
  });

  it("another owner's claim is refused while the lease holds, and accepted once it has run out", () => {
    const claimed = apply(submitted(), claim('a', 1000));
    expect(() => decideTask(claim('b', 1089), claimed)).toThrow(/claimed by a until/);
    expect(decideTask(claim('b', 1090), claimed)).toEqual([
      { type: 'UpstreamSubmitClaimed', data: { channelId: 'ch1', attempt: 1, owner: 'b', leaseUntil: 1180 } },
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
      data: { channelId: 'ch1', reason: 'down', retryable: true, attempt: 1 },
    });
    expect((failed as KnownTask).claim).toBeNull();
    expect(decideTask(claim('b', 1001, 2, 'ch2'), failed)).toHaveLength(1);
  });

  it('streams written before leases existed fold with no claim', () => {
    expect((submitted() as KnownTask).claim).toBeNull();
  });
});
