/** Memory: peak RSS of a gateway holding many tasks in flight (the simulator never finishes them). */
import { adminCookie, fundedKey, pool } from '../client.js';
import { tempDir } from '../../test/support/tmp.js';
import { startGateway, type SimulatorMode } from '../gateway.js';
import { ADMIN_PASSWORD, gatewayEnv } from './http.js';
import { peakRssByPart, pssOfTree } from '../proc-stats.js';

export interface MemoryResult {
  tasks: number;
  peakRssBytes: number;
  idleRssBytes: number;
  /** The peak of each process (`api`, `engine`, `supervisor`; `all` alone); runs before 2026-11-28 lack it. */
  peakRssBytesByPart?: Record<string, number>;
  /** The highest proportional set size of the tree, sampled every 250 ms (shared pages once); runs before 2026-11-28T04 lack it. */
  peakPssBytes?: number;
}

export async function memory(port: number, tasks: number, sim: SimulatorMode): Promise<MemoryResult> {
  const dir = tempDir('gateway-bench-');
  const gw = await startGateway(port, gatewayEnv(dir.path, { SIM_STEP_MS: '3600000', POLL_INTERVAL_MS: '600000' }), sim);
  let sampler: NodeJS.Timeout | undefined;
  try {
    const key = await fundedKey(gw.url, ADMIN_PASSWORD, 1e14);
    const idleRssBytes = gw.peakRss();
    let peakPssBytes = pssOfTree(gw.pid);
    sampler = setInterval(() => (peakPssBytes = Math.max(peakPssBytes, pssOfTree(gw.pid))), 250);
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    await pool(tasks, 64, async (i) => {
      const r = await fetch(`${gw.url}/v1/images/async/generations`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model: 'anime-diffusion-4-5-full', prompt: `held ${i}` }),
      });
      await r.arrayBuffer();
    });
    // Wait until the dispatcher has put every task in flight upstream (the poller holds them).
    const cookie = await adminCookie(gw.url, ADMIN_PASSWORD);
    const deadline = Date.now() + 300_000;
    for (;;) {
      const m = (await (await fetch(`${gw.url}/api/admin/metrics`, { headers: { cookie } })).json()) as { data: { tasks_in_flight: { dispatched: number } } };
      if (m.data.tasks_in_flight.dispatched >= tasks || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    clearInterval(sampler);
    peakPssBytes = Math.max(peakPssBytes, pssOfTree(gw.pid));
    return { tasks, peakRssBytes: gw.peakRss(), idleRssBytes, peakRssBytesByPart: peakRssByPart(gw.pid), peakPssBytes };
  } finally {
    // Stopped on a failed run too: a sampler left running would keep the bench alive.
    clearInterval(sampler);
    await gw.stop();
    dir.remove();
  }
}
