/**
 * The production image without a Docker engine. The Dockerfile is read for what its final
 * stage must be (non-root, node itself as PID 1 in exec form, a health check, production
 * dependencies only); then the build it runs (`npm run build`) is run here, and the command its
 * CMD names is started exactly so, with the image's environment: it gets ready, the image's
 * HEALTHCHECK command reports it healthy, and SIGTERM (what `docker stop` sends PID 1) drains it
 * to exit code 0.
 */
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedEnv } from '../support/child-gateway.js';
import { envOf, execForm, lastOf, readDockerfile, type Stage } from '../support/dockerfile.js';
import { ADMIN_PASSWORD } from '../support/gateway.js';
import { tempDir } from '../support/tmp.js';

const root = process.cwd();
const stages = readDockerfile(join(root, 'Dockerfile'));
const final = stages.at(-1)!;

/**
 * ENTRYPOINT followed by CMD, as Docker runs them; undefined unless both are set in the stage in
 * exec form: an ENTRYPOINT left unset is the base image's (node's images: docker-entrypoint.sh).
 */
function commandOf(stage: Stage): string[] | undefined {
  const entrypoint = lastOf(stage, 'ENTRYPOINT');
  const cmd = lastOf(stage, 'CMD');
  const head = entrypoint && execForm(entrypoint.args);
  const tail = cmd && execForm(cmd.args);
  return head && tail ? [...head, ...tail] : undefined;
}

function healthcheckCommand(stage: Stage): string[] | undefined {
  const args = lastOf(stage, 'HEALTHCHECK')?.args ?? '';
  const [, cmd = ''] = /^(?:--\S+\s+)*CMD\s+(.*)$/i.exec(args) ?? [];
  return execForm(cmd);
}

/** node's own name for the interpreter in an image is `node`; here it is this process's binary. */
function local(command: string[]): [string, string[]] {
  const [program = '', ...args] = command;
  return [program === 'node' ? process.execPath : program, args];
}

describe('Dockerfile', () => {
  it('builds in a named build stage and runs from a separate final stage', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(stages.map((s) => s.name)).toContain('build');
    expect(final.name).not.toBe('build');
    expect(final.instructions.some((i) => i.keyword === 'COPY' && /--from=build\b/.test(i.args))).toBe(true);
  });

  it('runs as a user that is not root', () => {
    const user = lastOf(final, 'USER')?.args.split(':')[0];
    expect(user).toBeTruthy();
    expect(['root', '0']).not.toContain(user);
  });

  it('starts node itself, in exec form, with no npm, npx, tsx or shell in between', () => {
    const command = commandOf(final);
    expect(command, 'ENTRYPOINT and CMD set in the final stage, in exec form').toBeDefined();
    expect(command![0]).toBe('node');
    for (const word of command!) expect(['npm', 'npx', 'tsx', 'sh', 'bash', '/bin/sh']).not.toContain(word);
  });

  it('checks its health with node on /readyz', () => {
    const check = healthcheckCommand(final);
    expect(check, 'HEALTHCHECK CMD in exec form').toBeDefined();
    expect(check![0]).toBe('node');
    expect(check!.join(' ')).toContain('/readyz');
  });

  it('installs production dependencies only in the final stage, and brings package.json (ESM)', () => {
    for (const { args } of final.instructions.filter((i) => i.keyword === 'RUN')) {
      if (/\bnpm\s+(ci|install|i)\b/.test(args)) expect(args).toMatch(/--omit=dev\b/);
    }
    expect(final.instructions.some((i) => i.keyword === 'COPY' && /\bpackage\.json\b/.test(i.args))).toBe(true);
  });

  it('is a production image: NODE_ENV, port 3000, a volume for DATA_DIR', () => {
    const env = envOf(final);
    expect(env.NODE_ENV).toBe('production');
    expect(env.HOST).toBe('0.0.0.0');
    expect(final.instructions.filter((i) => i.keyword === 'EXPOSE').map((i) => i.args)).toContain(env.PORT ?? '3000');
    expect(env.DATA_DIR).toBeTruthy();
    expect(
      final.instructions
        .filter((i) => i.keyword === 'VOLUME')
        .map((i) => i.args)
        .join(' '),
    ).toContain(env.DATA_DIR);
  });
});

describe('the compiled gateway, started as the image starts it', () => {
  const command = commandOf(final) ?? [];
  const entry = command.find((word) => word.endsWith('.js')) ?? '';
  const data = tempDir('gateway-image-');
  /**
   * The runtime stage's /app: package.json, node_modules (linked), the build's dist/ and the
   * console's build. Built here rather than into the checkout's dist/, which `npm start` runs
   * (tests starting it in parallel must never read a file tsc is rewriting).
   */
  const image = tempDir('gateway-image-app-');

  beforeAll(() => {
    copyFileSync(join(root, 'package.json'), join(image.path, 'package.json'));
    symlinkSync(join(root, 'node_modules'), join(image.path, 'node_modules'));
    if (existsSync(join(root, 'console', 'dist'))) {
      mkdirSync(join(image.path, 'console'));
      symlinkSync(join(root, 'console', 'dist'), join(image.path, 'console', 'dist'));
    }
    // `npm run build` (tsc over src/ and projections/) took 7 to 10 s here (two shared cores).
    const build = spawnSync('npm', ['run', 'build', '--', '--outDir', join(image.path, 'dist')], { cwd: root, encoding: 'utf8' });
    expect(build.status, `npm run build failed:\n${build.stdout}\n${build.stderr}`).toBe(0);
  }, 180_000);
  afterAll(() => {
    data.remove();
    image.remove();
  });

  it('emits the entry the CMD names', () => {
    expect(entry).toMatch(/^dist\//);
    expect(existsSync(join(image.path, entry))).toBe(true);
  });

  it('imports no package the production install leaves out', () => {
    const dependencies = Object.keys((JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies);
    const builtins = new Set(builtinModules);
    const imported = new Set<string>();
    for (const file of readdirSync(join(image.path, 'dist'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.js'))) {
      const code = readFileSync(join(image.path, 'dist', file), 'utf8');
      // Static imports and re-exports (their clause is names, braces, commas, `*`), bare imports, import().
      const specifiers = code.matchAll(/^\s*(?:(?:import|export)\s[\w\s{},*$]*?\bfrom\s*|import\s*)['"]([^'"\n]+)['"]|\bimport\(\s*['"]([^'"\n]+)['"]\s*\)/gm);
      for (const [, fromStatic, fromDynamic] of specifiers) {
        const specifier = fromStatic ?? fromDynamic ?? '';
        if (specifier.startsWith('.') || specifier.startsWith('node:') || builtins.has(specifier)) continue;
        const parts = specifier.split('/');
        imported.add(specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!);
      }
    }
    expect(imported.size).toBeGreaterThan(0);
    expect([...imported].filter((name) => !dependencies.includes(name))).toEqual([]);
  });

  it('gets ready, is healthy by the image health check, and drains to exit 0 on SIGTERM', async () => {
    expect(command[0], 'the image starts node').toBe('node');
    const [program, args] = local(command);
    const child = spawn(program, args, {
      cwd: image.path,
      // The image's environment, then what differs outside a container: loopback, any free port, a temp data dir.
      env: { ...embeddedEnv(), ...envOf(final), HOST: '127.0.0.1', PORT: '0', DATA_DIR: data.path, ADMIN_PASSWORD, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const logs = () =>
      stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { level: number; msg: string; address?: string; signal?: string });
    try {
      // PORT=0: the address is the one the gateway logs once it listens.
      const deadline = Date.now() + 60_000;
      let url: string | undefined;
      while (!url) {
        if (child.exitCode !== null) throw new Error(`gateway exited with ${child.exitCode}: ${stderr}`);
        if (Date.now() > deadline) throw new Error(`gateway did not listen: ${stdout}${stderr}`);
        url = logs().find((l) => l.msg === 'gateway listening')?.address;
        if (!url) await new Promise((r) => setTimeout(r, 100));
      }
      const ready = await fetch(`${url}/readyz`);
      expect(ready.status).toBe(200);

      const [checkProgram, checkArgs] = local(healthcheckCommand(final) ?? []);
      const healthEnv = { ...embeddedEnv(), ...envOf(final), PORT: new URL(url).port };
      expect(spawnSync(checkProgram, checkArgs, { env: healthEnv, timeout: 10_000 }).status, 'health check while ready').toBe(0);

      const sentAt = Date.now();
      child.kill('SIGTERM');
      const exit = await Promise.race([exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 8_000))]);
      expect(exit, `no exit within 8 s of SIGTERM:\n${stdout}\n${stderr}`).not.toBe('timeout');
      expect(exit).toEqual({ code: 0, signal: null });
      expect(Date.now() - sentAt).toBeLessThan(8_000);
      expect(logs().some((l) => l.msg === 'shutting down' && l.signal === 'SIGTERM')).toBe(true);
      expect(logs().filter((l) => l.level >= 50)).toEqual([]);
      expect(stderr).toBe('');

      expect(spawnSync(checkProgram, checkArgs, { env: healthEnv, timeout: 10_000 }).status, 'health check once stopped').not.toBe(0);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  }, 90_000);
});
