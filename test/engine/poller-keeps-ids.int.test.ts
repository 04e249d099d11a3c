/**
 * The poller keeps a task's id, channel and age between polls, not its folded state (issue 24,
 * memory that tracks live data): a state handed to `track` is garbage once the call returns, and
 * the task is still polled to its end from what was kept, each round reading the state as stored.
 * On a started gateway (createGateway, loopback HTTP, the simulator).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readTask } from '../../src/engine/commands/task-commands.js';
import type { KnownTask } from '../../src/domain/task.js';
import { adminClient, Client, eventually, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';
import { waitForImageTask } from '../support/images.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

let gw: TestGateway;
let api: Client;
let admin: Client;

beforeAll(async () => {
  // Slow enough that the task is still running upstream when it is tracked again by hand.
  gw = await startGateway({ SIM_STEP_MS: '150', POLL_INTERVAL_MS: '20' });
  admin = await adminClient(gw);
  const user = await newUser(admin, { credit: 1_000_000 });
  api = new Client(gw.url, (await newToken(user.client)).key);
});
afterAll(() => gw.close());

/** An image task submitted over HTTP, once the poller follows it (dispatched, running upstream). */
async function submittedAndFollowed(prompt: string): Promise<string> {
  const submitted = await api.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt, n: 1 });
  expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
  await eventually(async () => (gw.gateway.engine.poller.size() === 1 ? true : undefined), 10_000, 10);
  return submitted.body.id as string;
}

it('holds no folded task state between polls, and still polls the task to its end', async () => {
  const id = await submittedAndFollowed('kept by id [sim:slow]');
  const poller = gw.gateway.engine.poller;

  // Followed again from a state only this test and the poller could hold (a copy: the
  // stream-state cache keeps its own).
  poller.untrackWhere((taskId) => taskId === id);
  let state: KnownTask | undefined = structuredClone((await readTask(gw.gateway.deps.events, id)).state) as KnownTask;
  expect(state.status).not.toBe('submitted');
  expect(state.final).toBe(false);
  const handedIn = new WeakRef(state);
  poller.track(state);
  state = undefined;
  expect(poller.size()).toBe(1);
  // A WeakRef's target lives to the end of the job that made it: collect after it.
  await new Promise((resolve) => setTimeout(resolve, 0));
  gc();
  expect(handedIn.deref()).toBeUndefined();

  const done = await waitForImageTask(api, id, 30_000);
  expect(done.status).toBe('completed');
  expect(poller.size()).toBe(0);
});

it('fails a followed task whose channel is deleted as lost, read as stored, and stops following it', async () => {
  const id = await submittedAndFollowed('channel goes [sim:slow]');
  const poller = gw.gateway.engine.poller;
  const { state } = await readTask(gw.gateway.deps.events, id);
  const channelId = (state as KnownTask).channelId!;

  expect((await admin.delete(`/api/channel/${channelId}`)).status).toBe(200);
  const done = await waitForImageTask(api, id, 30_000);
  expect(done.status).toBe('failed');
  const events = await gw.gateway.deps.events.readStream(`task-${id}`);
  const failed = events.filter((e) => e.type === 'TaskFailed');
  expect(failed).toHaveLength(1);
  expect(failed[0]!.data).toMatchObject({ code: 'upstream_task_lost', reason: `channel ${channelId} is gone` });
  expect(poller.size()).toBe(0);
});
