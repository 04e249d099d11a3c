/**
 * A submit whose task append is written but whose answer is lost (a connection cut after the
 * commit): the submit used to release the reservation and answer an error, and the task it had
 * opened then ran unpaid (found by the deterministic simulation, seed 3). Now the submit looks
 * at the stream first: the task is there, so the client is answered with it, and it is
 * charged once when it completes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withOverrides } from '../support/event-store-overrides.js';
import { adminClient, Client, eventually, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';
import { expectBooksBalance, expectEachReservationClosedOnce } from '../support/billing.js';

/** Appends to a task stream's first event are written, then reported failed, while armed. */
const lose = { taskStreams: false, lost: 0 };
let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(
    { SIM_STEP_MS: '20', POLL_INTERVAL_MS: '20' },
    {
      wrapEventStore: (store) =>
        withOverrides(store, {
          append: async (stream, events, options) => {
            const result = await store.append(stream, events, options);
            if (lose.taskStreams && stream.startsWith('task-') && events[0]?.type === 'TaskSubmitted') {
              lose.lost++;
              throw new Error(`injected: the append to ${stream} was written but its answer was lost`);
            }
            return result;
          },
        }),
    },
  );
});
afterAll(() => gw.close());

describe('a submit whose task append was written but not answered', () => {
  it('answers the task it opened, which completes and is charged exactly once', async () => {
    const admin = await adminClient(gw);
    const user = await newUser(admin, { credit: 1_000_000 });
    const api = new Client(gw.url, (await newToken(user.client)).key);
    lose.taskStreams = true;
    const submitted = await api.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt: 'a lighthouse', n: 2 });
    lose.taskStreams = false;
    expect(lose.lost).toBe(1);
    expect(submitted.status).toBe(200);
    const id: string = submitted.body.id;
    const done = await eventually(async () => {
      const r = await api.get(`/v1/images/async/generations/${id}`);
      return r.body.status === 'completed' ? r.body : undefined;
    }, 20_000);
    expect(done.data).toHaveLength(2);
    await eventually(async () => ((await gw.gateway.deps.views.count('open-reservations', { accountId: user.accountId })) === 0 ? true : undefined));
    const { charged } = await expectBooksBalance(gw, user.accountId);
    expect(charged).toBe(2 * 10_000);
    expect(await expectEachReservationClosedOnce(gw, user.accountId)).toBe(1);
  });
});
