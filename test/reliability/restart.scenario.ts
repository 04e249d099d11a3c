/**
 * Restart with tasks in flight, on whichever stores a test gives the gateway: 24 tasks (slow,
 * plain, failing) submitted, the gateway killed with SIGKILL while they run upstream, started
 * again on the same data; every accepted task must end, none be charged twice, and the account
 * stream, read straight from the event store, must balance to the unit.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { foldAccount } from '../../src/domain/account.js';
import { toDomainEvent } from '../../src/domain/recorded.js';
import type { EventStore } from '../../src/ports/event-store.js';
import { startChildGateway, type ChildGateway } from '../support/child-gateway.js';
import { ADMIN_PASSWORD, Client, eventually, newToken, newUser } from '../support/gateway.js';
import { startSimProcess, type SimProcess } from '../support/sim-process.js';
import { tempDir } from '../support/tmp.js';
import { acceptedPerTask, claimsPerTask, runningUpstreamAt, unexplainedRepeats } from '../support/upstream-submits.js';

const SIM_STEP_MS = 60;

export interface RestartStores {
  /** What the gateway's environment adds to choose its stores (none: the embedded default). */
  env: Record<string, string>;
  /** The gateway's event store, opened by the test once the gateway has stopped. */
  openEventStore(dataDir: string): EventStore;
  cleanup(): Promise<void>;
}

export function restartScenario(name: string, stores: () => Promise<RestartStores>): void {
  const dir = tempDir();
  let running: ChildGateway | undefined;
  let sim: SimProcess | undefined;
  let opened: RestartStores | undefined;
  afterAll(async () => {
    await running?.kill('SIGKILL');
    await sim?.stop();
    await opened?.cleanup();
    dir.remove();
  });

  describe(`restart with tasks in flight (${name})`, () => {
    it('after a hard kill and a restart on the same data, every accepted task ends and none is charged twice', async () => {
      opened = await stores();
      // The upstream in its own process: its submit log outlives the kill.
      sim = await startSimProcess({ SIM_STEP_MS: String(SIM_STEP_MS) });
      const env = { SIM_STEP_MS: String(SIM_STEP_MS), POLL_INTERVAL_MS: '40', SIMULATOR_URL: sim.url, ...opened.env };
      running = await startChildGateway(dir.path, env);
      const admin = new Client(running.url);
      await admin.login('admin', ADMIN_PASSWORD);
      const user = await newUser(admin, { credit: 10_000_000 });
      const key = (await newToken(user.client)).key;
      let api = new Client(running.url, key);

      const ids: string[] = [];
      const taskOfPrompt = new Map<string, string>();
      for (let i = 0; i < 24; i++) {
        const prompt = i % 3 === 0 ? `slow ${i} [sim:slow]` : i % 3 === 1 ? `plain ${i}` : `fails ${i} [sim:fail]`;
        const r = await api.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt, n: 2 });
        expect(r.status).toBe(200);
        ids.push(r.body.id);
        taskOfPrompt.set(prompt, r.body.id);
      }
      // Kill while tasks are queued, running upstream, and finishing: no graceful drain.
      await new Promise((r) => setTimeout(r, 150));
      const killedAt = Date.now();
      await running.kill('SIGKILL');
      // The kill landed with work running upstream (the simulator's log says so).
      expect(runningUpstreamAt(await sim.submits(), killedAt, SIM_STEP_MS).length).toBeGreaterThan(0);

      running = await startChildGateway(dir.path, env);
      api = new Client(running.url, key);
      const finals = await eventually(
        async () => {
          const states = await Promise.all(ids.map(async (id) => (await api.get(`/v1/images/async/generations/${id}`)).body.status as string));
          return states.every((s) => s === 'completed' || s === 'failed') ? states : undefined;
        },
        30_000,
        200,
      );
      expect(finals.filter((s) => s === 'failed')).toHaveLength(8);
      expect(finals.filter((s) => s === 'completed')).toHaveLength(16);

      // Each task reached the upstream, and a second time only across the kill: a task whose
      // submit the kill cut between the upstream's answer and its record is submitted again by
      // the restarted gateway (the submit lease's one window, dispatcher.ts) until submits are
      // fenced upstream; so at most twice here, and never twice without the kill between two of
      // its claims (checked against the task streams below).
      const { perTask, unattributed } = acceptedPerTask(await sim.submits(), taskOfPrompt);
      expect(unattributed).toEqual([]);
      expect([...perTask.keys()].sort()).toEqual([...ids].sort());
      const repeated = [...perTask.values()].filter((l) => l.length > 1).length;
      expect([...perTask.values()].every((l) => l.length <= 2)).toBe(true);
      console.log(`[restart] 24 tasks, ${repeated} submitted upstream twice across the kill`);

      // Let the settler finish, then stop and audit the account stream directly.
      const self = new Client(running.url);
      self.cookie = user.client.cookie;
      await eventually(async () => ((await self.get('/api/user/self')).body.data.reserved_quota === 0 ? true : undefined), 15_000, 100);
      await running.kill('SIGTERM');
      running = undefined;

      const store = opened.openEventStore(dir.path);
      try {
        const claims = claimsPerTask((await store.readAll({ streamPrefixes: ['task-'] })).map(toDomainEvent));
        expect(unexplainedRepeats(perTask, claims, [killedAt])).toEqual([]);
        const recorded = await store.readStream(`account-${user.accountId}`);
        const closes = new Map<string, number>();
        for (const e of recorded) {
          if (e.type === 'QuotaSettled' || e.type === 'QuotaReleased') {
            const id = (e.data as { reservationId: string }).reservationId;
            closes.set(id, (closes.get(id) ?? 0) + 1);
          }
        }
        expect(recorded.filter((e) => e.type === 'QuotaReserved')).toHaveLength(24);
        expect([...closes.values()].every((n) => n === 1)).toBe(true);
        expect(closes.size).toBe(24);
        const settled = recorded.filter((e) => e.type === 'QuotaSettled');
        expect(settled).toHaveLength(16);
        const state = foldAccount(recorded.map(toDomainEvent).filter((e) => e !== undefined));
        expect(state.reserved).toBe(0);
        expect(state.balance).toBe(10_000_000 - 16 * 2 * 10_000);
      } finally {
        await store.close();
      }
    }, 120_000);
  });
}
