/**
 * Submit under load: `POST /v1/images/async/generations` measured as in the submit figure, but
 * with many tasks already in flight upstream (the simulator never finishes them), all on the
 * one account: the account aggregate holds that many open reservations while it decides.
 */
import { adminCookie, fundedKey, pool } from '../client.js';
import { load, type LoadResult } from '../load.js';
import { startGateway, type SimulatorMode } from '../gateway.js';
import { tempDir } from '../../test/support/tmp.js';
import { ADMIN_PASSWORD, gatewayEnv, submitBody } from './http.js';

export interface SubmitInFlightResult {
  /** Tasks in flight upstream when the measurement began. */
  tasksInFlight: number;
  submit: LoadResult;
}

export async function submitInFlight(port: number, tasks: number, seconds: number, sim: SimulatorMode): Promise<SubmitInFlightResult> {
  const dir = tempDir('gateway-bench-');
  const gw = await startGateway(port, gatewayEnv(dir.path, { SIM_STEP_MS: '3600000', POLL_INTERVAL_MS: '600000' }), sim);
  try {
    const key = await fundedKey(gw.url, ADMIN_PASSWORD, 1e14);
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    await pool(tasks, 64, async () => {
      const r = await fetch(`${gw.url}/v1/images/async/generations`, { method: 'POST', headers, body: submitBody });
      await r.arrayBuffer();
    });
    const cookie = await adminCookie(gw.url, ADMIN_PASSWORD);
    const deadline = Date.now() + 300_000;
    let inFlight = 0;
    for (;;) {
      const m = (await (await fetch(`${gw.url}/api/admin/metrics`, { headers: { cookie } })).json()) as { data: { tasks_in_flight: { dispatched: number } } };
      inFlight = m.data.tasks_in_flight.dispatched;
      if (inFlight >= tasks || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const submit = await load({ url: `${gw.url}/v1/images/async/generations`, seconds, method: 'POST', headers, body: submitBody });
    return { tasksInFlight: inFlight, submit };
  } finally {
    await gw.stop();
    dir.remove();
  }
}
