/**
 * MAX_TASKS_IN_FLIGHT_PER_ACCOUNT on the assembled gateway: the account aggregate counts its
 * open reservations (submit until settle or release), so the submit past the cap is 429 with
 * Retry-After, appends and charges nothing, holds under parallel submits, and passes once a
 * task completes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountView } from '../../src/domain/account.js';
import { adminClient, Client, expectNothingAppendedSince, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';
import { submitError } from '../support/errors.js';
import { waitForImageTask } from '../support/images.js';

const MODEL = 'anime-diffusion-4-5-full';
const REFUSAL = 'tasks: the account already has 2 tasks in flight, the most it may; retry when one completes';

describe('tasks in flight per account, MAX_TASKS_IN_FLIGHT_PER_ACCOUNT=2', () => {
  let gw: TestGateway;
  let admin: Client;

  beforeAll(async () => {
    // `[sim:slow]` tasks take about two seconds at 100 ms a step.
    gw = await startGateway({ MAX_TASKS_IN_FLIGHT_PER_ACCOUNT: '2', SIM_STEP_MS: '100', POLL_INTERVAL_MS: '20' });
    admin = await adminClient(gw);
  });
  afterAll(() => gw.close());

  async function account() {
    const user = await newUser(admin, { credit: 100_000_000 });
    return { ...user, api: new Client(gw.url, (await newToken(user.client)).key) };
  }
  const submit = (api: Client, prompt: string) => api.post('/v1/images/async/generations', { model: MODEL, prompt, n: 1 });

  it('the third submit while two run is 429 with Retry-After, nothing appended or charged; accepted again once one completes', async () => {
    const { api, accountId } = await account();
    const first = await submit(api, 'first [sim:slow]');
    const second = await submit(api, 'second [sim:slow]');
    expect([first.status, second.status]).toEqual([200, 200]);

    const head = await gw.gateway.deps.events.headPosition();
    const before = accountView(await gw.gateway.deps.accounts.state(accountId));
    const third = await submit(api, 'third');
    expect(third.status).toBe(429);
    expect(third.headers.get('retry-after')).toBe('5');
    expect(third.body).toEqual(submitError('too_many_tasks_in_flight', REFUSAL));
    await expectNothingAppendedSince(gw, head, third);

    // The art family answers it in its own shape.
    const art = await api.post('/art/submit/imagine', { prompt: 'a castle' });
    expect(art.status).toBe(429);
    expect(art.headers.get('retry-after')).toBe('5');
    expect(art.body).toEqual({ code: 4, description: REFUSAL, result: null });
    await expectNothingAppendedSince(gw, head, art);
    expect(accountView(await gw.gateway.deps.accounts.state(accountId))).toEqual(before);

    // Another account is not held back by this one.
    const other = await account();
    expect((await submit(other.api, 'elsewhere')).status).toBe(200);

    expect((await waitForImageTask(api, first.body.id)).status).toBe('completed');
    await gw.gateway.engine.settler.caughtUp(await gw.gateway.deps.events.headPosition());
    expect((await submit(api, 'after one completed')).status).toBe(200);
  });

  it('parallel submits: exactly the cap is accepted, and only those reserve', async () => {
    const { api, accountId } = await account();
    const replies = await Promise.all(Array.from({ length: 8 }, (_, i) => submit(api, `parallel ${i} [sim:slow]`)));
    expect(replies.filter((r) => r.status === 200)).toHaveLength(2);
    const refused = replies.filter((r) => r.status !== 200);
    expect(refused).toHaveLength(6);
    for (const r of refused) {
      expect(r.status).toBe(429);
      expect(r.body).toEqual(submitError('too_many_tasks_in_flight', REFUSAL));
    }
    const reserved = (await gw.gateway.deps.events.readStream(`account-${accountId}`)).filter((e) => e.type === 'QuotaReserved');
    expect(reserved).toHaveLength(2);
  });
});
