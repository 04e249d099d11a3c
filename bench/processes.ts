/**
 * Child processes of a benchmark: the baseline server and gateways, each on its own port,
 * started as the tests start theirs (the embedded default: the distributed backends' URLs are
 * not passed on).
 */
import { startTsxServer, stopProcess } from '../test/support/child-gateway.js';
import { peakRssOfTree } from './proc-stats.js';

export interface Child {
  url: string;
  pid: number;
  /** Peak resident set size so far (VmHWM), in bytes, summed over the process tree. */
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
    // Every process of the tree holds its own memory (the API and engine processes of PROCESSES=2,
    // and their supervisor): the sum of their peaks is what the machine gives it.
    peakRss: () => peakRssOfTree(child.pid!),
    stop: () => stopProcess(child, 'SIGTERM', 15_000),
  };
}
