/**
 * A callback body is the task's query view folded from its stream up to the final event that
 * scheduled the callback (engine/outbound/callbacks.ts): events after it (assets expired) do not change
 * it, a schedule recorded before `taskRevision` existed stops at the first final event, and the
 * same events sign to the same bytes.
 */
import { describe, expect, it } from 'vitest';
import { createAssetSigner } from '../../src/engine/media/assets.js';
import { eventsUpToSchedule } from '../../src/engine/outbound/callbacks.js';
import { taskViewFromEvents } from '../../src/engine/tasks/task-view.js';
import type { EventStore } from '../../src/ports/event-store.js';
import { callbacksProjection } from '../../projections/callbacks.js';
import { imageTaskProjection } from '../../src/families/images/view.js';
import { given } from '../projections/support.js';
import { useTempEventStore } from '../support/temp-event-store.js';

let events: EventStore;
useTempEventStore((s) => (events = s));
const signer = createAssetSigner('secret', () => 'https://api.example');
const EXP = 4_000_000_000;
const metadata = { at: '2026-01-01T00:00:00Z', accountId: 'acct-1' };

/** Submitted, in progress, succeeded (revision 2), assets expired. */
async function finishedAndExpired(taskId: string): Promise<void> {
  const submitted = { taskId, family: 'image', action: 'anime/generate', model: 'm', accountId: 'acct-1', createdAt: 1 };
  const succeeded = {
    results: [{ kind: 'image', assetKey: `tasks/${taskId}/0.png`, delivery: 'url' }],
    usage: { units: 1 },
    assetsExpireAt: EXP,
    completedAt: 2,
  };
  await events.append(`task-${taskId}`, [
    { id: `${taskId}-0`, type: 'TaskSubmitted', data: submitted, metadata },
    { id: `${taskId}-1`, type: 'TaskProgressed', data: { status: 'in_progress', progress: 50 }, metadata },
    { id: `${taskId}-2`, type: 'TaskSucceeded', data: succeeded, metadata },
    { id: `${taskId}-3`, type: 'AssetsExpired', data: { assetKeys: [`tasks/${taskId}/0.png`] }, metadata },
  ]);
}

const bodyOf = (taskEvents: Parameters<typeof taskViewFromEvents>[2], taskId: string) =>
  taskViewFromEvents({ signer }, imageTaskProjection, taskEvents, taskId, 'acct-1')?.body;

describe('callback bodies from events', () => {
  it('fold up to the scheduling event: completed with its signed URL, though the stream has moved on to expiry', async () => {
    await finishedAndExpired('t1');
    const upTo = await eventsUpToSchedule(events, { taskId: 't1', taskRevision: 2 });
    expect(upTo.map((e) => e.type)).toEqual(['TaskSubmitted', 'TaskProgressed', 'TaskSucceeded']);
    expect(bodyOf(upTo, 't1')).toMatchObject({ status: 'completed', data: [{ url: signer.url('tasks/t1/0.png', EXP) }] });
    expect(JSON.stringify(bodyOf(await eventsUpToSchedule(events, { taskId: 't1', taskRevision: 2 }), 't1'))).toBe(JSON.stringify(bodyOf(upTo, 't1')));
    // The whole stream is what the view shows now: no results.
    expect(bodyOf(await events.readStream('task-t1'), 't1')).toMatchObject({ status: 'completed', data: [] });
    // Another account's task gives no body.
    expect(taskViewFromEvents({ signer }, imageTaskProjection, upTo, 't1', 'acct-2')).toBeUndefined();
  });

  it('a schedule recorded without taskRevision stops at the first final event', async () => {
    await finishedAndExpired('t2');
    expect((await eventsUpToSchedule(events, { taskId: 't2' })).map((e) => e.type)).toEqual(['TaskSubmitted', 'TaskProgressed', 'TaskSucceeded']);
  });

  it('the callbacks view keeps the scheduling revision, and has none for older schedules', () => {
    const data = { taskId: 't3', accountId: 'acct-1', family: 'image', url: 'https://hooks.example/h', nextAttemptAt: 1 };
    expect(given(callbacksProjection, [['callback-t3', { type: 'CallbackScheduled', data: { ...data, taskRevision: 7 } }]]).get('t3')).toMatchObject({
      taskRevision: 7,
    });
    expect(given(callbacksProjection, [['callback-t3', { type: 'CallbackScheduled', data }]]).get('t3')).not.toHaveProperty('taskRevision');
  });
});
