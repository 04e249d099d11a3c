/**
 * A gateway for a scenario, with its upstream simulator either in a process of its own
 * (`out-of-process`, the default: only the gateway's own work runs on the measured loop) or
 * mounted in the gateway at `/_sim` as on the embedded default (`in-process`: both ends of every
 * upstream call, and the result files' encoding, count against the gateway).
 */
import { startChild, type Child } from './processes.js';
import { ensureGatewayBuilt } from '../scripts/gateway-build.js';

export type SimulatorMode = 'out-of-process' | 'in-process';
export const SIMULATOR_MODES: readonly SimulatorMode[] = ['out-of-process', 'in-process'];

/** `--sim in-process|out-of-process` from the command line; out of process when absent. */
export function simulatorModeOf(args: readonly string[]): SimulatorMode {
  const index = args.indexOf('--sim');
  if (index < 0) return 'out-of-process';
  const mode = SIMULATOR_MODES.find((m) => m === args[index + 1]);
  if (!mode) throw new Error(`--sim takes ${SIMULATOR_MODES.join(' or ')}, not ${args[index + 1] ?? 'nothing'}`);
  return mode;
}

/** The simulator listens this far above its gateway's port (scenario ports are a few apart). */
const SIMULATOR_PORT_OFFSET = 1000;

/** The gateway process as `npm start` starts it: compiled to dist/, built first when its sources changed (scripts/gateway-build.ts). */
export async function startGatewayProcess(port: number, env: Record<string, string>, nodeArgs: readonly string[] = []): Promise<Child> {
  await ensureGatewayBuilt();
  return startChild('dist/src/main.js', port, env, '/readyz', nodeArgs);
}

/**
 * Starts the gateway as `npm start` does (compiled, built first when its sources changed) on
 * `port` with `env` (and `nodeArgs` for node itself, e.g. `--cpu-prof`). Out of process, the simulator (`src/simulator/main.ts`)
 * starts first with the gateway's `SIM_STEP_MS`, and the gateway's seeded `/_sim` channels
 * resolve to it through `SIMULATOR_URL`; the child returned is the gateway (its pid and RSS),
 * whose `stop` stops both.
 */
export async function startGateway(port: number, env: Record<string, string>, mode: SimulatorMode, nodeArgs: readonly string[] = []): Promise<Child> {
  if (mode === 'in-process') return startGatewayProcess(port, env, nodeArgs);
  const simPort = port + SIMULATOR_PORT_OFFSET;
  const simulator = await startChild(
    'src/simulator/main.ts',
    simPort,
    { SIM_PREFIX: '/_sim', LOG_LEVEL: 'warn', ...(env.SIM_STEP_MS !== undefined ? { SIM_STEP_MS: env.SIM_STEP_MS } : {}) },
    '/healthz',
  );
  let gateway: Child;
  try {
    gateway = await startGatewayProcess(port, { ...env, SIMULATOR_URL: simulator.url }, nodeArgs);
  } catch (err) {
    await simulator.stop();
    throw err;
  }
  return {
    url: gateway.url,
    pid: gateway.pid,
    peakRss: () => gateway.peakRss(),
    // The gateway first: its engine's calls under way end before their upstream goes away.
    stop: async () => {
      await gateway.stop();
      await simulator.stop();
    },
  };
}
