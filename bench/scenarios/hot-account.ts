/**
 * Hot account (issue 26): one account's submits through two api processes over the same stores
 * (the embedded default's SQLite files in one DATA_DIR: the first process runs everything, the
 * second is `ROLE=api` on the same files, as a second api instance is on a shared event store),
 * each driven by autocannon with `connections` connections for `seconds`, at the same time. Every
 * submit reserves quota on the one account stream: the two processes' optimistic appends
 * conflict, each catches up and tries again, and what it cannot place in time is answered 503
 * `account_busy`. Measured first in the same run, on files of its own: the first process alone,
 * with as many connections as both together, the ratio's baseline (one process places its own
 * reservations without conflicts). Reported: accepted submits per second over both apis and its ratio to one
 * api alone, the share refused busy, and the latency; the target is in bench/README.md.
 */
import { tempDir } from '../../test/support/tmp.js';
import { fundedKey } from '../client.js';
import { startGateway, startGatewayProcess, type SimulatorMode } from '../gateway.js';
import type { Child } from '../processes.js';
import { load, type LoadResult } from '../load.js';
import { ADMIN_PASSWORD, gatewayEnv, submitBody } from './http.js';

export interface HotAccountResult {
  seconds: number;
  connectionsPerApi: number;
  /** The first api alone with 2 × connectionsPerApi connections. */
  alone: LoadResult;
  apis: LoadResult[];
  /** 200s per second over both apis. */
  acceptedPerSecond: number;
  /** 503 account_busy answers as a share of all answers. */
  busyShare: number;
  /** The worse of the two apis' p99 latency. */
  p99Ms: number;
  /** acceptedPerSecond ÷ the accepted submits per second of one api alone. */
  ratioToOneApi: number;
}

const accepted = (r: LoadResult): number => r.statusCodes['200'] ?? 0;

/** Submits through each of `urls` at once, `connections` each, on one funded account made through the first. */
async function submitsOn(urls: readonly string[], seconds: number, connections: number): Promise<LoadResult[]> {
  const key = await fundedKey(urls[0]!, ADMIN_PASSWORD, 1e14);
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  // Another api knows the key once it has read the token's event.
  for (const url of urls.slice(1)) {
    for (let tries = 0; ; tries++) {
      const r = await fetch(`${url}/v1/images/async/generations`, { method: 'POST', headers, body: submitBody });
      if (r.status === 200) break;
      if (tries > 100) throw new Error(`${url} does not take the key: ${r.status} ${await r.text()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return Promise.all(urls.map((url) => load({ url: `${url}/v1/images/async/generations`, seconds, connections, method: 'POST', headers, body: submitBody })));
}

/** `run` on gateways started on a fresh DATA_DIR: the first runs everything, the others are `ROLE=api` on the same files. */
async function onGateways<T>(port: number, count: number, sim: SimulatorMode, run: (urls: string[]) => Promise<T>): Promise<T> {
  const dir = tempDir('gateway-bench-hot-');
  const started: Child[] = [];
  try {
    started.push(await startGateway(port, gatewayEnv(dir.path, { PROCESSES: '1' }), sim));
    for (let i = 1; i < count; i++) started.push(await startGatewayProcess(port + i, gatewayEnv(dir.path, { PROCESSES: '1', ROLE: 'api' })));
    return await run(started.map((g) => g.url));
  } finally {
    for (const gateway of started.reverse()) await gateway.stop();
    dir.remove();
  }
}

export async function hotAccount(port: number, seconds: number, connectionsPerApi: number, sim: SimulatorMode): Promise<HotAccountResult> {
  // Each on fresh files, so neither starts behind the other's backlog of tasks to settle.
  const [alone] = await onGateways(port, 1, sim, (urls) => submitsOn(urls, seconds, 2 * connectionsPerApi));
  const apis = await onGateways(port + 2, 2, sim, (urls) => submitsOn(urls, seconds, connectionsPerApi));
  const acceptedPerSecond = Math.round(apis.reduce((sum, a) => sum + accepted(a), 0) / seconds);
  const busy = apis.reduce((sum, a) => sum + (a.statusCodes['503'] ?? 0), 0);
  const answered = apis.reduce((sum, a) => sum + Object.values(a.statusCodes).reduce((n, c) => n + c, 0), 0);
  return {
    seconds,
    connectionsPerApi,
    alone: alone!,
    apis,
    acceptedPerSecond,
    busyShare: answered === 0 ? 0 : busy / answered,
    p99Ms: Math.max(...apis.map((a) => a.p99Ms)),
    ratioToOneApi: acceptedPerSecond / Math.max(1, accepted(alone!) / seconds),
  };
}
