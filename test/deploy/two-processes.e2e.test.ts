/**
 * `npm start` with PROCESSES=2 (src/supervisor.ts): the embedded default as an API process and an
 * engine process over one data directory, started the way users start it. Under load both
 * processes work (each one's CPU time, from /proc); a kill -9 of the engine while tasks run
 * upstream, then of the API, is survived (the supervisor starts the dead one again; every task
 * completes, is charged once, nothing stays reserved); SIGTERM to the supervisor ends both; a
 * supervisor killed -9 leaves no process behind; a restart on the same data keeps everything.
 * The API process learns of the engine's view commits from the log: a revoked key and a disabled
 * user take effect at once there too, and polls follow a task to its end.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { embeddedEnv, freePort, GATEWAY_SCRIPT, startChildGateway, stopProcess, type ChildGateway } from '../support/child-gateway.js';
import { ADMIN_PASSWORD, Client, eventually, newToken, newUser } from '../support/gateway.js';
import { tempDir } from '../support/tmp.js';
import { startSimProcess, type SimProcess } from '../support/sim-process.js';
import { runningUpstreamAt } from '../support/upstream-submits.js';
import { alive, supervisedChildren } from '../support/supervised.js';
import { ENGINE_NICENESS } from '../../src/supervisor.js';

const dir = tempDir();
const secondDir = tempDir();
let gateway: ChildGateway | undefined;
let sim: SimProcess | undefined;
afterAll(async () => {
  await gateway?.kill('SIGKILL');
  await sim?.stop();
  dir.remove();
  secondDir.remove();
});

/** CPU time a process used so far, in clock ticks (user + system, /proc/<pid>/stat). */
function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** The niceness of each of a process's threads (/proc/<pid>/task/<tid>/stat, field 19). */
function threadNiceness(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => Number(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]));
}

describe('npm start with PROCESSES=2', () => {
  it('uses both processes, survives a kill -9 of each, and stops with its supervisor', async () => {
    // The upstream in a process of its own, as a real one would be: killing the API (where the
    // built-in simulator is mounted) must not take the upstream down with it.
    sim = await startSimProcess({ SIM_STEP_MS: '40' });
    const port = await freePort();
    const env = {
      PROCESSES: '2',
      PORT: String(port),
      SIM_STEP_MS: '40',
      POLL_INTERVAL_MS: '40',
      SIMULATOR_URL: sim.url,
    };
    gateway = await startChildGateway(dir.path, env);
    const supervisor = gateway.process.pid!;
    const first = supervisedChildren(supervisor);
    // The engine yields the CPU to the API's answers: every thread of it, none of the API's.
    expect(new Set(threadNiceness(first.engine))).toEqual(new Set([ENGINE_NICENESS]));
    expect(new Set(threadNiceness(first.api))).toEqual(new Set([0]));

    const admin = new Client(gateway.url);
    await admin.login('admin', ADMIN_PASSWORD);
    const user = await newUser(admin, { credit: 10_000_000 });
    const key = (await newToken(user.client)).key;
    const api = new Client(gateway.url, key);
    const before = { api: cpuTicks(first.api), engine: cpuTicks(first.engine) };
    const submit = async (prompt: string) => {
      const r = await api.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt, n: 1 });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body.id as string;
    };
    const ids: string[] = [];
    for (let i = 0; i < 60; i++) ids.push(await submit(i % 3 === 0 ? `slow ${i} [sim:slow]` : `plain ${i}`));
    // Both processes did work: the API its answers, the engine the dispatches and projections.
    const used = { api: cpuTicks(first.api) - before.api, engine: cpuTicks(first.engine) - before.engine };
    expect(used.api, JSON.stringify(used)).toBeGreaterThan(0);
    expect(used.engine, JSON.stringify(used)).toBeGreaterThan(0);

    // The engine dies while slow tasks run upstream (the upstream's own log says so); the API
    // keeps answering meanwhile.
    const killedAt = Date.now();
    process.kill(first.engine, 'SIGKILL');
    expect(runningUpstreamAt(await sim.submits(), killedAt, 40).length).toBeGreaterThan(0);
    ids.push(await submit('while the engine is down'));
    const second = await eventually(async () => {
      const now = supervisedChildren(supervisor);
      return now.engine !== first.engine && now.api === first.api ? now : undefined;
    }, 20_000);
    expect(new Set(threadNiceness(second.engine))).toEqual(new Set([ENGINE_NICENESS]));
    // Then the API dies; the supervisor starts it again on the same port.
    process.kill(second.api, 'SIGKILL');
    await eventually(async () => ((await fetch(`${gateway!.url}/readyz`).catch(() => undefined))?.ok ? true : undefined), 30_000, 100);
    expect(supervisedChildren(supervisor).api).not.toBe(second.api);

    let states: string[] = [];
    const finals = await eventually(
      async () => {
        states = await Promise.all(ids.map(async (id) => (await api.get(`/v1/images/async/generations/${id}`)).body.status as string));
        return states.every((s) => s === 'completed') ? states : undefined;
      },
      60_000,
      200,
    ).catch((err: unknown) => {
      throw new Error(`${String(err)}: ${JSON.stringify(ids.map((id, i) => [id, states[i]]).filter(([, s]) => s !== 'completed'))}`);
    });
    expect(finals).toHaveLength(ids.length);
    const session = new Client(gateway.url);
    await session.login(user.username, user.password);
    const figures = await eventually(async () => {
      const data = (await session.get('/api/user/self')).body.data as { reserved_quota: number; used_quota: number; balance: number };
      return data.reserved_quota === 0 && data.used_quota === ids.length * 10_000 ? data : undefined;
    }, 30_000);
    expect(figures.balance).toBe(10_000_000 - ids.length * 10_000);

    // SIGTERM to the supervisor: both children stop, then it exits.
    const last = supervisedChildren(supervisor);
    await gateway.kill('SIGTERM');
    expect(gateway.process.exitCode).toBe(0);
    expect(alive(last.api) || alive(last.engine)).toBe(false);

    // Started again on the same data: everything is there.
    gateway = await startChildGateway(dir.path, env);
    const again = new Client(gateway.url, key);
    expect((await again.get(`/v1/images/async/generations/${ids[0]}`)).body.status).toBe('completed');
    // A supervisor killed -9 leaves no child behind: each notices it is gone and stops.
    const orphans = supervisedChildren(gateway.process.pid!);
    await stopProcess(gateway.process, 'SIGKILL');
    gateway = undefined;
    await eventually(async () => (!alive(orphans.api) && !alive(orphans.engine) ? true : undefined), 20_000, 100);
  }, 240_000);

  it("takes a revoked key and a disabled user at once in the API process, and polls follow each task's progress to its end", async () => {
    // No PROCESSES: two is the default on this machine of two cores or more.
    gateway = await startChildGateway(secondDir.path, { PROCESSES: undefined, PORT: String(await freePort()), SIM_STEP_MS: '30', POLL_INTERVAL_MS: '30' });
    supervisedChildren(gateway.process.pid!);
    const admin = new Client(gateway.url);
    await admin.login('admin', ADMIN_PASSWORD);
    const user = await newUser(admin, { credit: 10_000_000 });
    const kept = new Client(gateway.url, (await newToken(user.client)).key);
    const revoked = await newToken(user.client);
    const doomed = new Client(gateway.url, revoked.key);
    expect((await doomed.get('/v1/models')).status).toBe(200);
    expect((await user.client.delete(`/api/token/${revoked.id}`)).status).toBe(200);
    expect((await doomed.get('/v1/models')).status).toBe(401);

    // Polled every few milliseconds from the API process's memory: progress never goes back,
    // and the end shows as soon as the engine has projected it.
    const submitted = await kept.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt: 'followed [sim:slow]', n: 1 });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
    const seen: number[] = [];
    const end = await eventually(
      async () => {
        const body = (await kept.get(`/v1/images/async/generations/${submitted.body.id as string}`)).body;
        seen.push(body.progress as number);
        return body.status === 'completed' ? body : undefined;
      },
      60_000,
      5,
    );
    expect(end.data).toHaveLength(1);
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
    expect(new Set(seen).size).toBeGreaterThan(2);

    expect((await admin.post(`/api/user/${user.userId}/disable`, { reason: 'test' })).status).toBe(200);
    expect((await kept.get('/v1/models')).status).toBe(403);
  }, 120_000);

  it('ends the start, exit 1, when a part cannot start (its port taken) instead of starting it again and again', async () => {
    const taken = createServer();
    const enginePort = await freePort();
    await new Promise<void>((r) => taken.listen(enginePort, '127.0.0.1', r));
    const empty = tempDir();
    try {
      const started = Date.now();
      const run = spawnSync(process.execPath, [GATEWAY_SCRIPT], {
        cwd: process.cwd(),
        env: { ...embeddedEnv(), DATA_DIR: empty.path, PORT: String(await freePort()), ENGINE_PORT: String(enginePort), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
        encoding: 'utf8',
        timeout: 90_000,
      });
      expect(run.status, run.stderr).toBe(1);
      expect(run.stdout + run.stderr).toMatch(/EADDRINUSE/);
      expect(Date.now() - started).toBeLessThan(60_000);
    } finally {
      taken.close();
      empty.remove();
    }
  }, 120_000);

  it('a supervisor killed -9 while its parts are still starting leaves neither behind', async () => {
    const data = tempDir();
    const supervisor = spawn(process.execPath, [GATEWAY_SCRIPT], {
      cwd: process.cwd(),
      env: { ...embeddedEnv(), PROCESSES: '2', DATA_DIR: data.path, PORT: String(await freePort()), LOG_LEVEL: 'warn' },
      stdio: 'ignore',
    });
    try {
      // Both parts forked, neither ready yet (a start takes seconds): the moment a missed
      // `disconnect` used to leave a part running for good.
      const parts = await eventually(
        async () => {
          try {
            return supervisedChildren(supervisor.pid!);
          } catch {
            return undefined;
          }
        },
        20_000,
        10,
      );
      await stopProcess(supervisor, 'SIGKILL');
      await eventually(async () => (!alive(parts.api) && !alive(parts.engine) ? true : undefined), 20_000, 100);
    } finally {
      if (supervisor.exitCode === null && supervisor.signalCode === null) await stopProcess(supervisor, 'SIGKILL');
      data.remove();
    }
  }, 60_000);
});
