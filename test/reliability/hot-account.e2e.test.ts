/**
 * One hot account on the assembled gateway: hundreds of concurrent submits with long prompts,
 * while another writer (a second account service on the same store, as a worker instance would
 * be) credits the same account. Every submit is accepted (no 413 for what others weigh, no 503
 * for contention), the conflicts are caught up incrementally, and the books balance: balance =
 * credits − settled charges, nothing reserved once every task ended, the audit clean.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditAccounts } from '../../src/audit/audit.js';
import { createAccountService } from '../../src/engine/accounts/account-service.js';
import { appendSize, WrongExpectedRevisionError, type EventStore } from '../../src/ports/event-store.js';
import { expectBooksBalance, expectEachReservationClosedOnce } from '../support/billing.js';
import { withOverrides } from '../support/event-store-overrides.js';
import { adminClient, Client, eventually, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';
import { FAST_ENGINE, waitForImageTask } from '../support/images.js';

const MODEL = 'anime-diffusion-4-5-full';
const TASKS = 300;
const CREDITS = 30;

describe('a hot account on the assembled gateway', () => {
  let gw: TestGateway;
  // What the account streams saw: append sizes, conflicts, events read back.
  const seen = { appends: [] as number[], conflicts: 0, eventsRead: 0 };

  beforeAll(async () => {
    gw = await startGateway(FAST_ENGINE, {
      wrapEventStore: (store: EventStore) =>
        withOverrides(store, {
          async append(stream, events, options) {
            if (!stream.startsWith('account-')) return store.append(stream, events, options);
            seen.appends.push(appendSize(events));
            try {
              return await store.append(stream, events, options);
            } catch (err) {
              if (err instanceof WrongExpectedRevisionError) seen.conflicts++;
              throw err;
            }
          },
          async readStream(stream, options) {
            const read = await store.readStream(stream, options);
            if (stream.startsWith('account-')) seen.eventsRead += read.length;
            return read;
          },
        }),
    });
  });
  afterAll(() => gw.close());

  it(`${TASKS} concurrent submits with long prompts while another writer credits: all accepted, the books balance`, async () => {
    const admin = await adminClient(gw);
    const user = await newUser(admin, { credit: 10_000_000 });
    const api = new Client(gw.url, (await newToken(user.client)).key);
    const other = createAccountService({ events: gw.gateway.deps.events, log: pino({ level: 'silent' }) });
    seen.appends.length = 0;
    seen.conflicts = 0;
    seen.eventsRead = 0;

    const started = Date.now();
    const submits = Array.from({ length: TASKS }, (_, i) =>
      api.post('/v1/images/async/generations', { model: MODEL, prompt: `task ${i}: ${'a long prompt '.repeat(600)}`, n: 1 }),
    );
    const credits = Array.from({ length: CREDITS }, async (_, i) => {
      await new Promise((resolve) => setTimeout(resolve, i * 5));
      await other.execute(
        user.accountId,
        { type: 'CreditQuota', data: { creditId: `side-${i}`, amount: 1000, note: 'side' } },
        { at: new Date().toISOString() },
      );
    });
    const [replies] = await Promise.all([Promise.all(submits), Promise.all(credits)]);
    const statuses = new Map<number, number>();
    for (const r of replies) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
    expect(Object.fromEntries(statuses)).toEqual({ 200: TASKS });

    const submitted = Date.now() - started;
    // Every task settled: no reservation left open on the account.
    await eventually(async () => ((await gw.gateway.deps.accounts.state(user.accountId)).openReservations.size === 0 ? true : undefined), 60_000, 100);
    await gw.gateway.engine.settler.caughtUp(await gw.gateway.deps.events.headPosition());
    const sample = await waitForImageTask(api, replies[TASKS - 1]!.body.id);
    expect(sample.status).toBe('completed');

    const { replay, credits: credited, charged } = await expectBooksBalance(gw, user.accountId);
    expect(credited).toBe(10_000_000 + CREDITS * 1000);
    expect(replay.balance).toBe(credited - charged);
    expect(replay.reserved).toBe([...replay.openReservations.values()].reduce((s, r) => s + r.amount, 0));
    expect(replay.openReservations.size).toBe(0);
    expect(await expectEachReservationClosedOnce(gw, user.accountId)).toBe(TASKS);
    // Each task completed and was charged: settled, none released.
    const settled = (await gw.gateway.deps.events.readStream(`account-${user.accountId}`)).filter((e) => e.type === 'QuotaSettled');
    expect(settled).toHaveLength(TASKS);
    const report = await auditAccounts(gw.gateway.deps.events, gw.gateway.deps.views, { accountId: user.accountId });
    expect(report.discrepancies).toEqual([]);

    // What a run measured (the report of the change quotes it).
    console.log(
      `hot account: ${TASKS} submits answered in ${submitted} ms; ${seen.appends.length} account appends, largest ${Math.max(...seen.appends)} bytes, ${seen.conflicts} conflicts, ${seen.eventsRead} account events read`,
    );
  }, 120_000);
});
