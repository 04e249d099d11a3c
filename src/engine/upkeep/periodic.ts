import type { Logger } from 'pino';
import type { BackgroundProcess } from '../../lib/background.js';

/**
 * A pass that runs on an interval, never overlapping itself; `runOnce` joins a running pass.
 * The first pass runs right after start (a restart does not wait a whole interval to reconcile).
 */
export interface Periodic {
  readonly name: string;
  runOnce(): Promise<number>;
  start(intervalMs: number): void;
  stop(): Promise<void>;
  /** When the last pass finished without an error. */
  lastPass(): Date | undefined;
}

export function periodic(name: string, log: Logger, pass: () => Promise<number>): Periodic {
  let timer: NodeJS.Timeout | undefined;
  let first: NodeJS.Timeout | undefined;
  let running: Promise<number> | undefined;
  let lastPass: Date | undefined;
  const runOnce = (): Promise<number> =>
    (running ??= pass()
      .then((n) => {
        lastPass = new Date();
        return n;
      })
      .finally(() => (running = undefined)));
  const tick = () => void runOnce().catch((err: unknown) => log.error({ err }, `${name} pass failed`));
  return {
    name,
    runOnce,
    lastPass: () => lastPass,
    start(intervalMs) {
      first = setTimeout(tick, 0);
      first.unref();
      timer = setInterval(tick, intervalMs);
      timer.unref();
    },
    async stop() {
      if (first) clearTimeout(first);
      if (timer) clearInterval(timer);
      await running?.catch(() => undefined);
    },
  };
}

/** A periodic pass as a background process of a role, on its interval. */
export function periodicProcess(p: Periodic, intervalMs: number): BackgroundProcess {
  return {
    name: p.name,
    lastPass: () => p.lastPass(),
    start: async () => p.start(intervalMs),
    stop: () => p.stop(),
  };
}
