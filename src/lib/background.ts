/**
 * A background process of a role (process manager, projections, publisher, periodic pass).
 * The composition root keeps them in one list, starts them in order and stops them in reverse,
 * and `/readyz` reports each one's last successful pass: a process that was never started, or
 * that stopped making progress, is visible instead of silently missing.
 */
export interface BackgroundProcess {
  readonly name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** When it last finished a unit of work or confirmed it had none pending; undefined before that. */
  lastPass(): Date | undefined;
  /** What an operator should see of its share of the work (a projector's projections), if anything. */
  detail?(): Record<string, unknown>;
}

export interface ProcessStatus {
  last_pass: string | null;
  [detail: string]: unknown;
}

export function statusOf(processes: readonly BackgroundProcess[]): Record<string, ProcessStatus> {
  return Object.fromEntries(processes.map((p) => [p.name, { ...p.detail?.(), last_pass: p.lastPass()?.toISOString() ?? null }]));
}

/** Starts in list order; if one fails, stops those already started (reverse order) and rethrows. */
export async function startAll(processes: readonly BackgroundProcess[]): Promise<void> {
  const started: BackgroundProcess[] = [];
  try {
    for (const p of processes) {
      await p.start();
      started.push(p);
    }
  } catch (err) {
    await stopAll(started);
    throw err;
  }
}

/** Stops in reverse list order: what started last depends on what started first. */
export async function stopAll(processes: readonly BackgroundProcess[]): Promise<void> {
  for (const p of [...processes].reverse()) await p.stop();
}
