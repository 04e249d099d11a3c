/**
 * A submit frozen between its reservation and its task stream for longer than the reservation
 * grace period: the reconciler releases the reservation (its task never appeared), then the
 * submit goes on and opens the task. Before, that task was dispatched, ran upstream and was
 * settled against a reservation that no longer existed: it ran unpaid (found by the
 * deterministic simulation, seed 114, an API process paused for 88 s). Now the dispatcher
 * asks whether the reservation is still open before the first upstream try: the task fails
 * `task_never_submitted`, the upstream never hears of it, and nothing is charged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withOverrides } from '../support/event-store-overrides.js';
import { adminClient, Client, eventually, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';
import { expectBooksBalance, expectEachReservationClosedOnce } from '../support/billing.js';

/** While armed, a task stream's opening waits until its reservation has been released. */
const freeze = { armed: false, held: 0 };
let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(
    { RESERVATION_GRACE_SECONDS: '1', SIM_STEP_MS: '20', POLL_INTERVAL_MS: '20' },
    {
      wrapEventStore: (store) =>
        withOverrides(store, {
          append: async (stream, events, options) => {
            const opening = events[0]?.type === 'TaskSubmitted' ? (events[0].data as { accountId: string; reservationId: string }) : undefined;
            if (freeze.armed && opening) {
              freeze.held++;
              // Frozen (a GC pause, a stopped container) until the reconciler has given up on it.
              await eventually(async () => {
                const account = await store.readStream(`account-${opening.accountId}`);
                return account.some((e) => e.type === 'QuotaReleased' && (e.data as { reservationId: string }).reservationId === opening.reservationId)
                  ? true
                  : undefined;
              }, 20_000);
              return store.append(stream, events, options);
            }
            return store.append(stream, events, options);
          },
        }),
    },
  );
});
afterAll(() => gw.close());

describe('a task opened after its reservation was released', () => {
  it('fails before any upstream call and is charged nothing', async () => {
    const admin = await adminClient(gw);
    const user = await newUser(admin, { credit: 1_000_000 });
    const api = new Client(gw.url, (await newToken(user.client)).key);
    const submitsBefore = (await new Client(gw.url).get('/_sim/_submits')).body;
    freeze.armed = true;
    const submitted = await api.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt: 'a frozen lighthouse', n: 1 });
    freeze.armed = false;
    expect(freeze.held).toBe(1);
    expect(submitted.status).toBe(200);
    const id: string = submitted.body.id;
    const ended = await eventually(async () => {
      const r = await api.get(`/v1/images/async/generations/${id}`);
      return r.body.status === 'failed' ? r.body : undefined;
    }, 20_000);
    expect(ended.error.message).toMatch(/opened after its reservation had been released/);
    const failed = (await gw.gateway.deps.events.readStream(`task-${id}`)).find((e) => e.type === 'TaskFailed');
    expect((failed?.data as { code: string }).code).toBe('task_never_submitted');
    // The upstream never heard of it: no submit carries its client reference.
    const submits = (await new Client(gw.url).get('/_sim/_submits')).body as { submits: { idempotencyKey?: string }[] };
    expect(submits.submits.filter((s) => s.idempotencyKey?.startsWith(`${id}:`))).toEqual([]);
    expect(submits.submits.length).toBe((submitsBefore as { submits: unknown[] }).submits.length);
    const { charged } = await expectBooksBalance(gw, user.accountId);
    expect(charged).toBe(0);
    expect(await expectEachReservationClosedOnce(gw, user.accountId)).toBe(1);
  });
});
