/**
 * The gateway as a separate process, so a test can kill it the hard way (SIGKILL: no graceful
 * drain) and start it again on the same data directory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from '../../src/lib/free-port.js';
import { ADMIN_PASSWORD } from './gateway.js';

/** A port on 127.0.0.1 that nothing listens on right now. */
export { freePort };

/**
 * The compiled gateway `npm start` runs (dist/, built by the tests' global setup whenever its
 * sources changed): what users start, and about 1.6 s less CPU a start than the sources under
 * the tsx loader (3.8 s against 2.2 s here), in each process start of the suite (twelve of the files
 * that start them took 197 CPU seconds instead of 312).
 */
export const GATEWAY_SCRIPT = 'dist/src/main.js';
/** The upstream simulator as a process of its own, compiled likewise. */
export const SIMULATOR_SCRIPT = 'dist/src/simulator/main.js';

export interface ChildGateway {
  url: string;
  process: ChildProcess;
  kill(signal: NodeJS.Signals): Promise<void>;
}

export interface NodeServer {
  child: ChildProcess;
  url: string;
  /** What it wrote so far: stderr, and stdout too when collected. */
  output(): string;
}

/**
 * Starts `script` as a server process on 127.0.0.1:`port` and waits until `readyPath` answers
 * 200 (60 s unless told). Node itself runs it, a `.ts` script with tsx as a loader (not the tsx
 * wrapper, which would leave its node child running when killed), so a signal really reaches the
 * server; a `.js` script (the compiled gateway `npm start` runs) as it is. A server that
 * exits or never gets ready fails the start with what it wrote, and is not left running.
 */
export async function startNodeServer(o: {
  script: string;
  /** Names it in errors. */
  name: string;
  env: Record<string, string>;
  port: number;
  readyPath: string;
  /** Collect stdout as well (its log), not only stderr. */
  collectStdout?: boolean;
  /** Node's own options (e.g. `--cpu-prof`), before the loader. */
  nodeArgs?: readonly string[];
  /**
   * A command that runs node (e.g. `strace` and its options): `child` is then that command's
   * process, leading a process group of its own (a failed start kills the whole group: killing
   * strace alone would leave the gateway it traces running).
   */
  wrapper?: readonly string[];
  startTimeoutMs?: number;
}): Promise<NodeServer> {
  const loader = o.script.endsWith('.ts') ? ['--import', 'tsx'] : [];
  const command = [...(o.wrapper ?? []), process.execPath, ...(o.nodeArgs ?? []), ...loader, o.script];
  const child = spawn(command[0]!, command.slice(1), {
    cwd: process.cwd(),
    env: { ...embeddedEnv(), ...o.env },
    stdio: ['ignore', o.collectStdout ? 'pipe' : 'ignore', 'pipe'],
    detached: o.wrapper !== undefined,
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const url = `http://127.0.0.1:${o.port}`;
  const deadline = Date.now() + (o.startTimeoutMs ?? 60_000);
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${o.name} exited with ${child.exitCode}: ${output}`);
    try {
      if ((await fetch(`${url}${o.readyPath}`)).ok) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) {
      // Not left running behind the failed test.
      if (o.wrapper && child.pid) process.kill(-child.pid, 'SIGKILL');
      else child.kill('SIGKILL');
      throw new Error(`${o.name} did not start: ${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, url, output: () => output };
}

/** `env` as the gateway's environment over the defaults below; a variable given as undefined is left unset. */
export async function startChildGateway(dataDir: string, env: Record<string, string | undefined> = {}): Promise<ChildGateway> {
  // A PORT given in `env` is the one it listens on (a test that must know it beforehand, e.g. for PUBLIC_BASE_URL).
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const { child, url } = await startNodeServer({
    script: GATEWAY_SCRIPT,
    name: 'gateway',
    // SIMULATOR=1 as startGateway (gateway.ts) sets it. One process unless the test asks for two:
    // its kill -9 lands on the gateway itself, not on a supervisor whose children exit with it.
    env: Object.fromEntries(
      Object.entries({
        HOST: '127.0.0.1',
        PORT: String(port),
        DATA_DIR: dataDir,
        ADMIN_PASSWORD,
        LOG_LEVEL: 'warn',
        SIMULATOR: '1',
        PROCESSES: '1',
        // Two processes (PROCESSES unset or 2) put the engine on PORT + 1 unless told: a port
        // nobody asked to be free, which an outgoing connection of another test may hold (a
        // start failed once with EADDRINUSE on it).
        ENGINE_PORT: String(await freePort()),
        ...env,
      }).filter((entry): entry is [string, string] => entry[1] !== undefined),
    ),
    port,
    readyPath: '/readyz',
    collectStdout: true,
  });
  return {
    url,
    process: child,
    kill: (signal) => stopProcess(child, signal),
  };
}

/**
 * Sends `signal` and resolves once the process has exited (at once if it already had); with
 * `killAfterMs`, one that is still running by then is killed (SIGKILL).
 */
export function stopProcess(child: ChildProcess, signal: NodeJS.Signals, killAfterMs?: number): Promise<void> {
  return new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill(signal);
    if (killAfterMs !== undefined) setTimeout(() => child.kill('SIGKILL'), killAfterMs).unref();
  });
}

/**
 * The test process's environment without the distributed backends' URLs: CI exports
 * KAFKA_BROKERS for the Kafka contract suite (POSTGRES_URL for PostgreSQL's), and a child
 * gateway that inherited it would run on Kafka instead of the embedded default these tests are about.
 */
export function embeddedEnv(): NodeJS.ProcessEnv {
  const { KAFKA_BROKERS: _kafka, EVENTSTORE_URL: _esdb, MONGO_URL: _mongo, POSTGRES_URL: _postgres, ...rest } = process.env;
  return rest;
}

/** Stops every gateway with SIGTERM at once; one still running 10 s later is killed (SIGKILL). */
export async function stopGateways(children: Iterable<ChildGateway>): Promise<void> {
  await Promise.all([...children].map((child) => stopProcess(child.process, 'SIGTERM', 10_000)));
}
