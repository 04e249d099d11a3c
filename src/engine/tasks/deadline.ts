/**
 * A task's deadline: it is created at `createdAt` and must have ended (succeeded, or failed
 * and its reservation released) within its family's maximum age, whatever the upstream does.
 * Upstream work runs under `beforeDeadline`: it gets a signal that aborts at the deadline, and
 * the engine stops waiting for it then even if the work ignores the signal.
 */

/** Longest a synchronous call may run (unless TASK_MAX_AGE_SECONDS says otherwise). */
export const SYNC_MAX_AGE_SECONDS = 300;

/** The work did not finish before the task's deadline. */
export class TaskDeadlineError extends Error {
  constructor(readonly maxAgeSeconds: number) {
    super(`no result within ${maxAgeSeconds} s`);
    this.name = 'TaskDeadlineError';
  }
}

export interface TaskDeadline {
  /** Epoch milliseconds by which the task must have ended. */
  at: number;
  maxAgeSeconds: number;
}

export function taskDeadline(createdAtSeconds: number, maxAgeSeconds: number): TaskDeadline {
  return { at: (createdAtSeconds + maxAgeSeconds) * 1000, maxAgeSeconds };
}

/** Milliseconds left before the deadline (0 once it passed). */
export function remainingMs(deadline: TaskDeadline, now: Date): number {
  return Math.max(0, deadline.at - now.getTime());
}

/**
 * Runs `work` with a signal that aborts at the deadline; rejects with TaskDeadlineError at the
 * deadline (or at once when it passed) without waiting for `work` to notice.
 */
export async function beforeDeadline<T>(deadline: TaskDeadline, now: Date, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const left = remainingMs(deadline, now);
  if (left <= 0) throw new TaskDeadlineError(deadline.maxAgeSeconds);
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new TaskDeadlineError(deadline.maxAgeSeconds);
      // Rejected first, so the deadline wins over the failure the abort causes in `work`.
      reject(err);
      controller.abort(err);
    }, left);
  });
  try {
    return await Promise.race([work(controller.signal), expired]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The work's outcome, or the signal's reason as soon as it aborts: a caller stops waiting for an
 * upstream that ignores its signal (at the deadline, on a revoke or a stop, past a health check's time).
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(signal.reason as Error);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
