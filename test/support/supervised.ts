/** The processes `npm start` runs with PROCESSES=2 (src/supervisor.ts), as a test finds them. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

export type Part = 'api' | 'engine';

/**
 * A gateway process's part, from its environment: its ROLE (`api`, `engine`), `all` for one
 * process alone, or `supervisor` for the one that starts the two; `process` once it is gone.
 */
export function roleOf(pid: number): string {
  try {
    const env = readFileSync(`/proc/${pid}/environ`, 'utf8');
    return /(?:^|\0)ROLE=([a-z]+)/.exec(env)?.[1] ?? (/(?:^|\0)PROCESSES=1(?:\0|$)/.test(env) ? 'all' : 'supervisor');
  } catch {
    return 'process';
  }
}

/** The supervisor's children by role (their environment says which). */
export function supervisedChildren(supervisorPid: number): Record<Part, number> {
  const pids = execFileSync('pgrep', ['-P', String(supervisorPid)], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map(Number);
  const found: Partial<Record<Part, number>> = {};
  for (const pid of pids) {
    const role = roleOf(pid);
    if (role === 'api' || role === 'engine') found[role] = pid;
  }
  if (!found.api || !found.engine) throw new Error(`children of ${supervisorPid}: ${JSON.stringify(found)}`);
  return found as Record<Part, number>;
}

export const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
