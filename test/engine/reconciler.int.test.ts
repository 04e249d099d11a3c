import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReconciler, NEVER_SUBMITTED } from '../../src/engine/upkeep/reconciler.js';
import { submitTask } from '../../src/engine/tasks/submit.js';
import { executeTask } from '../../src/engine/commands/task-commands.js';
import type { EventStore } from '../../src/ports/event-store.js';
import { faultyEventStore } from '../support/faulty-event-store.js';
import { startGateway, type TestGateway } from '../support/gateway.js';
import { callerFor as callerForGateway, submitOf } from '../support/submit-request.js';

let gw: TestGateway;
let failOn: { pattern: RegExp | undefined };

beforeAll(async () => {
  gw = await startGateway(
    {},
    {
      wrapEventStore: (store: EventStore) => {
        const faulty = faultyEventStore(store);
        failOn = faulty.failOn;
        return faulty.store;
      },
    },
  );
});
afterAll(() => gw.close());

const callerFor = (credit: number) => callerForGateway(gw, credit);

describe('reservation reconciler', () => {
  it('a failed task append releases the reservation at once', async () => {
    const { caller, accountId } = await callerFor(100_000);
    failOn.pattern = /^task-/;
    await expect(submitTask(gw.gateway.deps, submitOf(caller))).rejects.toThrow(/injected failure/);
    failOn.pattern = undefined;
    const state = await gw.gateway.deps.accounts.state(accountId);
    expect(state.reserved).toBe(0);
    expect(state.balance).toBe(100_000);
  });

  it('a reservation whose task stream never appeared (crash between the appends) is released after the grace period', async () => {
    const { caller, accountId } = await callerFor(100_000);
    // The task append fails and so does the immediate release: as if the process died there.
    const deps = gw.gateway.deps;
    let reserved = false;
    failOn.pattern = /^task-/;
    // eslint-disable-next-line @typescript-eslint/unbound-method -- the service is built of closures (no `this`); the very function is put back below
    const original = deps.accounts.execute;
    deps.accounts.execute = async (id, command, meta) => {
      if (command.type === 'ReleaseQuota') throw new Error('process died before the release');
      const result = await original(id, command, meta);
      reserved = true;
      return result;
    };
    await expect(submitTask(deps, submitOf(caller))).rejects.toThrow(/injected failure/);
    deps.accounts.execute = original;
    failOn.pattern = undefined;
    expect(reserved).toBe(true);
    expect((await deps.accounts.state(accountId)).reserved).toBeGreaterThan(0);

    const head = await deps.events.headPosition();
    await deps.runner.waitFor(head);
    const log = pino({ level: 'silent' });
    const early = createReconciler({ ...deps, log, graceSeconds: 3600, clock: () => new Date() });
    expect(await early.runOnce()).toBe(0);
    // Where instances split the work, the task's partition belongs to another: that one releases it.
    const elsewhere = createReconciler({ ...deps, log, graceSeconds: 60, clock: () => new Date(Date.now() + 120_000), owns: () => false });
    expect(await elsewhere.runOnce()).toBe(0);
    const late = createReconciler({ ...deps, log, graceSeconds: 60, clock: () => new Date(Date.now() + 120_000) });
    expect(await late.runOnce()).toBe(1);
    const state = await deps.accounts.state(accountId);
    expect(state.reserved).toBe(0);
    expect(state.balance).toBe(100_000);
    const events = await deps.events.readStream(`account-${accountId}`);
    expect(events.at(-1)).toMatchObject({ type: 'QuotaReleased', data: { reason: NEVER_SUBMITTED } });
    // A second pass finds nothing left to release.
    await deps.runner.waitFor(await deps.events.headPosition());
    expect(await late.runOnce()).toBe(0);
  });

  it('a reservation whose task exists is left alone', async () => {
    const { caller, accountId } = await callerFor(100_000);
    await submitTask(gw.gateway.deps, submitOf(caller));
    await gw.gateway.deps.runner.waitFor(await gw.gateway.deps.events.headPosition());
    const late = createReconciler({ ...gw.gateway.deps, log: pino({ level: 'silent' }), graceSeconds: 1, clock: () => new Date(Date.now() + 120_000) });
    await late.runOnce();
    expect((await gw.gateway.deps.accounts.state(accountId)).reserved).toBeGreaterThan(0);
  });
});

describe('the settler’s backstop', () => {
  it('a task that ended while its reservation stayed open (its settlement missed) is settled after the grace period', async () => {
    const { caller, accountId } = await callerFor(100_000);
    const deps = gw.gateway.deps;
    const settler = gw.gateway.engine.settler;
    // The settler misses the task's end (as when a checkpoint had passed it).
    await settler.stop();
    try {
      const { taskId } = await submitTask(deps, submitOf(caller));
      await executeTask(
        deps.events,
        taskId,
        { type: 'FailTask', data: { code: 'timeout', reason: 'ended unseen', completedAt: Math.floor(Date.now() / 1000) } },
        { at: new Date().toISOString(), accountId, correlationId: taskId },
      );
      await deps.runner.waitFor(await deps.events.headPosition());
      expect((await deps.accounts.state(accountId)).reserved).toBeGreaterThan(0);
      const log = pino({ level: 'silent' });
      const soon = createReconciler({ ...deps, log, graceSeconds: 3600, clock: () => new Date() });
      expect(await soon.runOnce()).toBe(0);
      const late = createReconciler({ ...deps, log, graceSeconds: 60, clock: () => new Date(Date.now() + 120_000) });
      expect(await late.runOnce()).toBe(1);
      const state = await deps.accounts.state(accountId);
      expect(state.reserved).toBe(0);
      expect(state.balance).toBe(100_000);
      const closes = (await deps.events.readStream(`account-${accountId}`)).filter((e) => e.type === 'QuotaReleased' || e.type === 'QuotaSettled');
      expect(closes).toMatchObject([{ type: 'QuotaReleased', data: { reason: 'timeout' } }]);
    } finally {
      await settler.start();
    }
    // The settler, back, finds the reservation closed and closes nothing twice.
    await settler.caughtUp(await deps.events.headPosition());
    await deps.runner.waitFor(await deps.events.headPosition());
    const late = createReconciler({ ...deps, log: pino({ level: 'silent' }), graceSeconds: 60, clock: () => new Date(Date.now() + 120_000) });
    expect(await late.runOnce()).toBe(0);
  });
});

describe('the settler’s backstop, when a settlement fails', () => {
  it('a task it cannot settle does not hold up the reservations behind it', async () => {
    const { caller, accountId } = await callerFor(100_000);
    const deps = gw.gateway.deps;
    const settler = gw.gateway.engine.settler;
    await settler.stop();
    const ended: string[] = [];
    try {
      for (let i = 0; i < 2; i++) {
        const { taskId } = await submitTask(deps, submitOf(caller));
        await executeTask(
          deps.events,
          taskId,
          { type: 'FailTask', data: { code: 'timeout', reason: 'ended unseen', completedAt: Math.floor(Date.now() / 1000) } },
          { at: new Date().toISOString(), accountId, correlationId: taskId },
        );
        ended.push(taskId);
      }
      await deps.runner.waitFor(await deps.events.headPosition());
      // The older task's release fails (as a store that refuses one account append would).
      const accounts = {
        ...deps.accounts,
        execute: ((id, command, metadata, options) => {
          if (metadata.correlationId === ended[0]) return Promise.reject(new Error('injected: this release fails'));
          return deps.accounts.execute(id, command, metadata, options);
        }) satisfies typeof deps.accounts.execute,
      };
      const late = createReconciler({ ...deps, accounts, log: pino({ level: 'silent' }), graceSeconds: 60, clock: () => new Date(Date.now() + 120_000) });
      expect(await late.runOnce()).toBe(1);
      // The other's was released; the failing one's stays reserved (the settler keeps trying it).
      expect((await deps.events.readStream(`account-${accountId}`)).filter((e) => e.type === 'QuotaReleased')).toHaveLength(1);
      expect((await deps.accounts.state(accountId)).reserved).toBeGreaterThan(0);
    } finally {
      await settler.start();
    }
    await settler.caughtUp(await deps.events.headPosition());
    expect((await deps.accounts.state(accountId)).reserved).toBe(0);
  });
});

describe('interrupted synchronous calls', () => {
  it('a sync task left unfinished by a dead process is failed after its timeout and its reservation released', async () => {
    const { caller, accountId } = await callerFor(100_000);
    const deps = gw.gateway.deps;
    // What a process that died mid-call leaves behind: a submitted sync task, nothing more.
    await submitTask(deps, { ...submitOf(caller), sync: true });
    await deps.runner.waitFor(await deps.events.headPosition());
    const log = pino({ level: 'silent' });
    const soon = createReconciler({ ...deps, log, graceSeconds: 60, clock: () => new Date(Date.now() + 120_000) });
    expect(await soon.runOnce()).toBe(0);
    const late = createReconciler({ ...deps, log, graceSeconds: 60, clock: () => new Date(Date.now() + 400_000) });
    expect(await late.runOnce()).toBe(1);
    await gw.gateway.engine.settler.caughtUp(await deps.events.headPosition());
    const state = await deps.accounts.state(accountId);
    expect(state.reserved).toBe(0);
    expect(state.balance).toBe(100_000);
  });
});
