/**
 * The upstream simulator as a process of its own (compiled, `src/simulator/main.ts`): a gateway started
 * with `SIMULATOR_URL` set to its url sends its seeded `/_sim` channels' calls there, and the
 * simulator's submit log (`GET /_sim/_submits`) outlives the gateway's kills.
 */
import type { SubmitLogSnapshot, SubmitRecord } from '../../src/simulator/submit-log.js';
import { freePort, SIMULATOR_SCRIPT, startNodeServer, stopProcess, type NodeServer } from './child-gateway.js';

export interface SimProcess {
  url: string;
  server: NodeServer;
  /** The submits it logged after `after` (a seq), oldest first. */
  submits(after?: number): Promise<SubmitRecord[]>;
  log(): Promise<SubmitLogSnapshot>;
  stop(): Promise<void>;
}

export async function startSimProcess(env: Record<string, string> = {}, options: { collectStdout?: boolean } = {}): Promise<SimProcess> {
  const port = await freePort();
  const server = await startNodeServer({
    script: SIMULATOR_SCRIPT,
    name: 'simulator',
    env: { HOST: '127.0.0.1', PORT: String(port), SIM_PREFIX: '/_sim', LOG_LEVEL: 'warn', ...env },
    port,
    readyPath: '/healthz',
    ...(options.collectStdout ? { collectStdout: true } : {}),
  });
  const log = async (after = 0): Promise<SubmitLogSnapshot> => {
    const res = await fetch(`${server.url}/_sim/_submits${after > 0 ? `?after=${after}` : ''}`);
    if (!res.ok) throw new Error(`simulator submit log: ${res.status}`);
    return (await res.json()) as SubmitLogSnapshot;
  };
  return {
    url: server.url,
    server,
    submits: async (after) => [...(await log(after)).submits],
    log: () => log(),
    stop: () => stopProcess(server.child, 'SIGTERM', 5000),
  };
}
