/** How the stores that commit appends in groups (SQLite, PostgreSQL) answer each append of a group. */
export type JobOutcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

export interface PendingJob<J, R> {
  job: J;
  resolve(value: R): void;
  reject(error: unknown): void;
}

/** Settles each caller of a committed group with its own outcome (a missing one is a bug, said as such). */
export function settleGroup<J, R>(group: readonly PendingJob<J, R>[], outcomes: readonly JobOutcome<R>[]): void {
  group.forEach((pending, index) => {
    const outcome = outcomes[index];
    if (!outcome) pending.reject(new Error('group commit produced no outcome for a job'));
    else if (outcome.ok) pending.resolve(outcome.value);
    else pending.reject(outcome.error);
  });
}
