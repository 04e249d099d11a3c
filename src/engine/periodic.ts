import type { Logger } from 'pino';

/** A pass that runs on an interval, never overlapping itself; `runOnce` joins a running pass. */
export interface Periodic {
  runOnce(): Promise<number>;
  start(intervalMs: number): void;
  stop(): Promise<void>;
}

export function periodic(name: string, log: Logger, pass: () => Promise<number>): Periodic {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<number> | undefined;
  const runOnce = (): Promise<number> => (running ??= pass().finally(() => (running = undefined)));
  return {
    runOnce,
    start(intervalMs) {
      timer = setInterval(() => void runOnce().catch((err: unknown) => log.error({ err }, `${name} pass failed`)), intervalMs);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      await running?.catch(() => undefined);
    },
  };
}
