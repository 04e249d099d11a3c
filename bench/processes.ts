/**
 * Child processes of a benchmark: the baseline server and gateways, each on its own port,
 * started as the tests start theirs (the embedded default: the distributed backends' URLs are
 * not passed on).
 */
import { startTsxServer, stopProcess } from '../test/support/child-gateway.js';
import { treePids, vmHwm } from './proc-stats.js';

export interface Child {
  url: string;
  pid: number;
  /** Peak resident set size so far (VmHWM), in bytes. */
  peakRss(): number;
  stop(): Promise<void>;
}

export async function startChild(
  script: string,
  port: number,
  env: Record<string, string>,
  readyPath: string,
  nodeArgs: readonly string[] = [],
): Promise<Child> {
  const { child, url } = await startTsxServer({
    script,
    name: script,
    env: { HOST: '127.0.0.1', PORT: String(port), ...env },
    port,
    readyPath,
    nodeArgs,
    startTimeoutMs: 120_000,
  });
  return {
    url,
    pid: child.pid!,
    peakRss() {
      // tsx runs the script in a child node process: take the largest VmHWM of the tree.
      return Math.max(...treePids(child.pid!).map(vmHwm));
    },
    stop: () => stopProcess(child, 'SIGTERM', 15_000),
  };
}
