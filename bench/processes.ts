/** Child processes of a benchmark: the baseline server and gateways, each on its own port. */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface Child {
  url: string;
  pid: number;
  /** Peak resident set size so far (VmHWM), in bytes. */
  peakRss(): number;
  stop(): Promise<void>;
}

async function waitFor(url: string, child: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`child exited ${child.exitCode}: ${stderr()}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline) throw new Error(`child did not start: ${stderr()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function startChild(
  script: string,
  port: number,
  env: Record<string, string>,
  readyPath: string,
  nodeArgs: readonly string[] = [],
): Promise<Child> {
  // Node with tsx as a loader, so the child's pid is the server itself (signals and RSS).
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', script], {
    env: { ...embeddedEnv(), HOST: '127.0.0.1', PORT: String(port), ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  await waitFor(url + readyPath, child, () => stderr);
  return {
    url,
    pid: child.pid!,
    peakRss() {
      // tsx runs the script in a child node process: take the largest VmHWM of the tree.
      const pids = [child.pid!, ...childPids(child.pid!)];
      return Math.max(...pids.map(vmHwm));
    },
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 15_000).unref();
      }),
  };
}

function childPids(pid: number): number[] {
  try {
    const kids = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    return kids.flatMap((k) => [k, ...childPids(k)]);
  } catch {
    return [];
  }
}

function vmHwm(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** The bench measures the embedded default: the distributed backends' URLs are not passed on. */
function embeddedEnv(): NodeJS.ProcessEnv {
  const { KAFKA_BROKERS: _kafka, EVENTSTORE_URL: _esdb, MONGO_URL: _mongo, ...rest } = process.env;
  return rest;
}
