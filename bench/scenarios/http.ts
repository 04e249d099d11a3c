/** Baseline, poll and submit: requests/s and latency under autocannon, 50 connections. */
import { tempDir } from '../../test/support/tmp.js';
import { fundedKey, pool } from '../client.js';
import { startGateway, type SimulatorMode } from '../gateway.js';
import { load, type LoadResult } from '../load.js';
import { startChild } from '../processes.js';

export const ADMIN_PASSWORD = 'bench-admin-password';

export async function baseline(port: number, seconds: number): Promise<LoadResult> {
  const hello = await startChild('bench/hello-server.ts', port, {}, '/');
  try {
    return await load({ url: hello.url, seconds });
  } finally {
    await hello.stop();
  }
}

export const gatewayEnv = (dataDir: string, extra: Record<string, string> = {}) => ({
  DATA_DIR: dataDir,
  ADMIN_PASSWORD,
  LOG_LEVEL: 'warn',
  SIM_STEP_MS: '0',
  POLL_INTERVAL_MS: '20',
  RESERVATION_GRACE_SECONDS: '3600',
  ...extra,
});

// Small images: with `--sim in-process` the simulator runs in the gateway's process, and what it does is not the gateway's cost.
export const submitBody = JSON.stringify({ model: 'anime-diffusion-4-5-full', prompt: 'bench', size: '64x64' });

export async function pollAndSubmit(port: number, seconds: number, poolSize: number, sim: SimulatorMode): Promise<{ poll: LoadResult; submit: LoadResult }> {
  const dir = tempDir('gateway-bench-');
  const gw = await startGateway(port, gatewayEnv(dir.path), sim);
  try {
    const key = await fundedKey(gw.url, ADMIN_PASSWORD, 1e14);
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const ids = await pool(poolSize, 16, async () => {
      const r = await fetch(`${gw.url}/v1/images/async/generations`, { method: 'POST', headers, body: submitBody });
      return ((await r.json()) as { id: string }).id;
    });
    // Let the pool finish so polls read completed tasks from the view.
    await new Promise((r) => setTimeout(r, 2000));
    let i = 0;
    const poll = await load({
      url: `${gw.url}/v1/images/async/generations/${ids[0]}`,
      seconds,
      headers,
      nextPath: () => `/v1/images/async/generations/${ids[i++ % ids.length]}`,
    });
    const submit = await load({ url: `${gw.url}/v1/images/async/generations`, seconds, method: 'POST', headers, body: submitBody });
    return { poll, submit };
  } finally {
    await gw.stop();
    dir.remove();
  }
}
