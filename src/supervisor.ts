/**
 * `npm start` with PROCESSES=2: the embedded default as two processes over the same data
 * directory, so a submit's answer and the work it sets off run on both cores — the HTTP API
 * (ROLE=api, on PORT) and the engine with the projections (ROLE=engine, /readyz and /metrics on
 * ENGINE_PORT, loopback). Each event is still written once, to the event store both share
 * (SQLite in WAL mode takes one writer at a time, across processes); the engine process alone
 * owns every task partition (the in-process bus, one member), as the single process did.
 *
 * Both start at once: the API seeds the first administrator and the channels of an empty data
 * directory (its start waits for the engine's projections to show them), and a secret generated
 * into it is made by whichever process comes first (one file wins). A child that dies (kill -9, a crash)
 * is started again, after 1 s doubling to 30 s while it keeps dying young; the other goes on:
 * submits wait as `submitted` for the engine's adoption, polls answer from the views. SIGTERM
 * and SIGINT go to both children, and the supervisor exits once both have. A child whose
 * supervisor died (its IPC channel closes) shuts itself down (main.ts), so no child outlives it.
 * The engine runs at a lower CPU priority (ENGINE_NICENESS): the API's answers come first.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { makeDirectorySync } from './lib/sync-directory.js';
import { get } from 'node:http';
import { setPriority } from 'node:os';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { freePort } from './lib/free-port.js';
import { loadChannelKeys } from './engine/channels/channel-key-secret.js';
import { loadSigningSecret } from './engine/media/assets.js';

/** An idle subscription's look for the other process's appends, unless EVENT_POLL_INTERVAL_MS says otherwise. */
const CROSS_PROCESS_POLL_MS = 20;
const RESTART_FIRST_MS = 1000;
const RESTART_MAX_MS = 30_000;
/** A child that ran this long before dying is restarted after the first delay again. */
const STABLE_MS = 60_000;
/**
 * The engine's niceness (0 is the API's): when both want a core, the API's answers come first
 * and the engine's work, which no client waits on, waits. Five gives the API about three times
 * the engine's share; ten (a tenth) gained no more on the submits and starved the engine beside
 * other busy processes of the machine, which the engine must not be (decision 0164). Lowering a
 * priority needs no privilege.
 */
export const ENGINE_NICENESS = 5;

type Part = 'api' | 'engine';

export async function supervise(config: Config, log: Logger): Promise<void> {
  // The data directory's secrets, read (or generated) once before either part starts: one that
  // cannot be read stops the start here, in one line, instead of in both children.
  makeDirectorySync(config.dataDir);
  loadChannelKeys(config);
  loadSigningSecret(config.assetSigningSecret, config.dataDir);
  // An API asked to listen on port 0 gets a free one here: the engine must know where it is.
  const apiPort = config.port || (await freePort());
  const enginePort = config.enginePort ?? (config.port ? config.port + 1 : 0);
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  const common: NodeJS.ProcessEnv = {
    PROCESSES: '1',
    EVENT_POLL_INTERVAL_MS: process.env.EVENT_POLL_INTERVAL_MS ?? String(CROSS_PROCESS_POLL_MS),
  };
  const envOf: Record<Part, NodeJS.ProcessEnv> = {
    api: { ...common, ROLE: 'api', PORT: String(apiPort) },
    engine: {
      ...common,
      ROLE: 'engine',
      HOST: '127.0.0.1',
      PORT: String(enginePort),
      // What the single process used: result URLs signed on the API's base, the simulator (and
      // any relative channel URL) reached through the API.
      PUBLIC_BASE_URL: config.publicBaseUrl ?? apiUrl,
      SIMULATOR_URL: config.simulatorUrl ?? apiUrl,
    },
  };
  const children = new Map<Part, ChildProcess>();
  const delays: Record<Part, number> = { api: RESTART_FIRST_MS, engine: RESTART_FIRST_MS };
  let stopping = false;
  const exited = new Map<Part, Promise<void>>();

  function start(part: Part): ChildProcess {
    const child = fork(process.argv[1]!, process.argv.slice(2), {
      execArgv: process.execArgv,
      env: { ...process.env, ...envOf[part] },
      stdio: 'inherit',
    });
    const startedAt = Date.now();
    if (part === 'engine') lowerPriority(child, log);
    children.set(part, child);
    exited.set(
      part,
      new Promise((resolve) =>
        child.once('exit', (code, signal) => {
          resolve();
          if (children.get(part) === child) children.delete(part);
          if (stopping) return;
          delays[part] = Date.now() - startedAt > STABLE_MS ? RESTART_FIRST_MS : delays[part];
          log.error({ part, pid: child.pid, code, signal, restartInMs: delays[part] }, `the ${part} process died; starting it again`);
          const delay = delays[part];
          delays[part] = Math.min(delays[part] * 2, RESTART_MAX_MS);
          setTimeout(() => {
            if (!stopping) start(part);
          }, delay).unref();
        }),
      ),
    );
    log.info({ part, pid: child.pid }, `${part} process started`);
    return child;
  }

  // A signal while the parts start stops them as one after the start does: the children say
  // they listen before the supervisor has seen the API answer.
  const startFailed = new AbortController();
  const stop = async (signal: NodeJS.Signals, why = 'shutting down both processes') => {
    if (stopping) return;
    stopping = true;
    startFailed.abort();
    log.info({ signal }, why);
    for (const child of children.values()) child.kill(signal);
    const grace = setTimeout(() => {
      for (const child of children.values()) child.kill('SIGKILL');
    }, config.shutdownGraceMs + 15_000);
    grace.unref();
    await Promise.all(exited.values());
    clearTimeout(grace);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));

  const engine = start('engine');
  const api = start('api');
  // A part that exits before the API first answers (a mistake it printed) ends the start: that
  // is no crash to survive, and starting it again would only print it again.
  const ready = await Promise.race([
    answers(`${apiUrl}/healthz`, 180_000, startFailed.signal),
    exited.get('api')!.then(() => false),
    exited.get('engine')!.then(() => false),
  ]);
  if (stopping) return;
  if (!ready) {
    await stop('SIGTERM', 'a part did not start; stopping the other');
    process.exitCode = api.exitCode || engine.exitCode || 1;
    return;
  }
  log.info({ address: apiUrl }, 'gateway listening (API and engine processes)');
}

/**
 * One look: node:http, not fetch. The first fetch loads Node's bundled undici, which took the
 * supervisor from 73 to 103 MB at its peak for this one look; node:http is loaded already.
 */
function answers200(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const request = get(url, { timeout: 1000 }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(false));
  });
}

/** Whether `url` answers 200 within `timeoutMs` (polled), unless `signal` gives up first. */
async function answers(url: string, timeoutMs: number, signal: AbortSignal): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !signal.aborted) {
    if (await answers200(url)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

/** Gives the engine process ENGINE_NICENESS; where the system refuses, it runs at the API's priority and says so. */
function lowerPriority(child: ChildProcess, log: Logger): void {
  if (child.pid === undefined) return;
  try {
    setPriority(child.pid, ENGINE_NICENESS);
  } catch (err) {
    log.warn({ err, pid: child.pid }, "the engine process runs at the API process's priority: lowering it was refused");
  }
}
