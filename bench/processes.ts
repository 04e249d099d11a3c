/**
 * Child processes of a benchmark: the baseline server and gateways, each on its own port,
 * started as the tests start theirs (the embedded default: the distributed backends' URLs are
 * not passed on).
 */
import { startNodeServer, stopProcess } from '../test/support/child-gateway.js';
import { peakRssOfTree, statFields, treePids } from './proc-stats.js';

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
  const { child, url } = await startNodeServer({
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
    // Stopped means every process of the tree gone: a supervisor killed after the grace leaves
    // its children to notice it, and a data directory removed meanwhile could still be written.
    async stop() {
      const tree = treePids(child.pid!);
      await stopProcess(child, 'SIGTERM', 15_000);
      await untilGone(tree.slice(1), 5_000);
    },
  };
}

/** Waits until none of `pids` runs; those still running after `graceMs` are killed. */
async function untilGone(pids: readonly number[], graceMs: number): Promise<void> {
  // A zombie (state Z) has exited already; only its parent's reaping is left.
  const running = () => pids.filter((pid) => (statFields(pid)?.[0] ?? 'Z') !== 'Z');
  const deadline = Date.now() + graceMs;
  while (running().length > 0) {
    if (Date.now() > deadline) for (const pid of running()) process.kill(pid, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 50));
  }
}
