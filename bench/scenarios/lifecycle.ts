/** Life cycle: tasks submitted as fast as accepted and driven to completion; projection lag. */
import { tempDir } from '../../test/support/tmp.js';
import { adminCookie, fundedKey, pool } from '../client.js';
import { startGateway, type SimulatorMode } from '../gateway.js';
import { cpuMsPerUnit, cpuSecondsByPart } from '../proc-stats.js';
import { scenarioStores, type StoreChoice } from '../stores.js';
import { ADMIN_PASSWORD, gatewayEnv } from './http.js';

export interface LifecycleResult {
  tasks: number;
  seconds: number;
  tasksPerSecond: number;
  submitSeconds: number;
  lagP50Ms: number | null;
  lagP99Ms: number | null;
  /** CPU per task of each process (`all` alone; `api` and `engine` with PROCESSES=2), ms. */
  cpuMsPerTask?: Record<string, number>;
  /** Where the events and views were (runs before 2026-11-28T08 were all on SQLite). */
  store?: StoreChoice;
}

interface Metrics {
  data: { final_event_lag_ms: { count: number; p50: number | null; p99: number | null }; tasks_in_flight: { submitted: number; dispatched: number } };
}

/**
 * Polls the admin metrics until `tasks` final events reached the views and nothing is in flight;
 * fails after 10 minutes from `started`. Returns the last metrics read.
 */
export async function untilEveryTaskEnded(url: string, cookie: string, tasks: number, started = Date.now()): Promise<Metrics> {
  for (;;) {
    const metrics = (await (await fetch(`${url}/api/admin/metrics`, { headers: { cookie } })).json()) as Metrics;
    const m = metrics.data;
    if (m.final_event_lag_ms.count >= tasks && m.tasks_in_flight.submitted + m.tasks_in_flight.dispatched === 0) return metrics;
    if (Date.now() - started > 600_000) throw new Error(`life cycle did not finish: ${JSON.stringify(m)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function lifecycle(port: number, tasks: number, sim: SimulatorMode, store: StoreChoice = 'sqlite'): Promise<LifecycleResult> {
  const dir = tempDir('gateway-bench-');
  const stores = scenarioStores(store);
  const gw = await startGateway(port, { ...gatewayEnv(dir.path), ...stores.env }, sim).catch(async (err: unknown) => {
    await stores.drop();
    dir.remove();
    throw err;
  });
  try {
    const key = await fundedKey(gw.url, ADMIN_PASSWORD, 1e14);
    const cookie = await adminCookie(gw.url, ADMIN_PASSWORD);
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const cpuBefore = cpuSecondsByPart(gw.pid);
    const started = Date.now();
    await pool(tasks, 64, async (i) => {
      const r = await fetch(`${gw.url}/v1/images/async/generations`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model: 'anime-diffusion-4-5-full', prompt: `life ${i}`, size: '64x64' }),
      });
      if (r.status !== 200) throw new Error(`submit answered ${r.status}: ${await r.text()}`);
      await r.arrayBuffer();
    });
    const submitted = Date.now();
    const metrics = await untilEveryTaskEnded(gw.url, cookie, tasks, started);
    const seconds = (Date.now() - started) / 1000;
    return {
      tasks,
      seconds,
      tasksPerSecond: Math.round(tasks / seconds),
      submitSeconds: (submitted - started) / 1000,
      lagP50Ms: metrics.data.final_event_lag_ms.p50,
      lagP99Ms: metrics.data.final_event_lag_ms.p99,
      cpuMsPerTask: cpuMsPerUnit(cpuBefore, cpuSecondsByPart(gw.pid), tasks),
      store,
    };
  } finally {
    await gw.stop();
    await stores.drop();
    dir.remove();
  }
}
