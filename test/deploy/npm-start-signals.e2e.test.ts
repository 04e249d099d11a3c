/**
 * `npm start` as a supervisor runs it (systemd, a process manager, a terminal's Ctrl-C): the
 * supervisor knows one pid, npm's, and signals only that one. The gateway must drain and exit
 * with it: nothing of the process group left running, the port closed. The test starts npm in a
 * process group of its own, sends SIGTERM to npm's pid alone, and looks at the whole group.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { embeddedEnv, freePort } from '../support/child-gateway.js';
import { ADMIN_PASSWORD } from '../support/gateway.js';
import { tempDir } from '../support/tmp.js';

/** The pids of process group `pgid` still alive (zombies are dead). */
function groupMembers(pgid: number): number[] {
  const out = execFileSync('ps', ['-e', '-o', 'pid=,pgid=,stat='], { encoding: 'utf8' });
  return out
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter(([pid, group, stat]) => pid && Number(group) === pgid && !stat?.startsWith('Z'))
    .map(([pid]) => Number(pid));
}

/** Whether anything accepts a connection on 127.0.0.1:`port`. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

/** `what` may be a function: read when the wait fails (what a child printed by then, say). */
async function until(what: string | (() => string), check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${typeof what === 'string' ? what : what()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const dir = tempDir();
let npm: ChildProcess | undefined;
afterAll(() => {
  // Whatever survived a failed run is not left behind (the group this test started, by its id).
  if (npm?.pid !== undefined && groupMembers(npm.pid).length > 0) process.kill(-npm.pid, 'SIGKILL');
  dir.remove();
});

describe('npm start under a supervisor', () => {
  it('SIGTERM to npm’s pid alone stops the gateway: the port closes and no process of the group survives', async () => {
    const port = await freePort();
    // `npm start` runs its prestart step too (the console build, when console/dist is missing).
    npm = spawn('npm', ['start'], {
      cwd: process.cwd(),
      detached: true,
      env: { ...embeddedEnv(), HOST: '127.0.0.1', PORT: String(port), DATA_DIR: dir.path, ADMIN_PASSWORD, LOG_LEVEL: 'info', SIMULATOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    npm.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    npm.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<void>((resolve) => npm!.once('exit', () => resolve()));
    const pgid = npm.pid!;

    await until(
      () => `the gateway answers /readyz (its output so far: ${output.slice(-4000)})`,
      async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.ok === true,
      150_000,
    );
    expect(groupMembers(pgid).length).toBeGreaterThan(0);

    process.kill(pgid, 'SIGTERM');
    await exited;
    await until('nothing of the group is left', () => groupMembers(pgid).length === 0, 20_000).catch(() => {
      throw new Error(`still running after npm exited: ${execFileSync('ps', ['-o', 'pid,stat,args', '-g', String(pgid)], { encoding: 'utf8' })}`);
    });
    expect(await listening(port)).toBe(false);
    // The gateway itself received the signal and drained (not a kill from outside).
    expect(output).toMatch(/"signal":"SIGTERM".*"msg":"shutting down"/);
  }, 240_000);
});
