/**
 * The gateway compiled to plain JavaScript (`dist/`, as `npm run build` writes it) whenever its
 * sources changed since the last build: `npm start` runs the compiled gateway, not the sources
 * under a TypeScript loader (decision 0148: the loader costs about 35 MB in each of the three
 * processes and its start time in each). A build already fresh costs one walk of the sources'
 * modification times. Two starts at once build once: the second waits for the first's lock.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
/** Written after a build that succeeded: the sources older than it are in dist/. */
const stamp = join(root, 'dist', '.built');
const lock = join(root, 'dist', '.building');
/** What the compiled gateway is made of (tsconfig.build.json's `include`, its configs and dependencies). */
const inputs = ['src', 'projections', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json'];
/** A lock older than this was left by a build that died: taken over. */
const STALE_LOCK_MS = 10 * 60_000;

function newestModified(path: string): number {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestModified(join(path, entry)));
  return newest;
}

function fresh(): boolean {
  const built = statSync(stamp, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  return built > 0 && inputs.every((input) => newestModified(join(root, input)) <= built);
}

function takeLock(): boolean {
  try {
    mkdirSync(lock);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
    if (age > STALE_LOCK_MS) rmSync(lock, { recursive: true, force: true });
    return false;
  }
}

/** Builds dist/ unless it is fresh; true when it built. Throws (tsc's own messages on stderr) when the sources do not compile. */
export async function ensureGatewayBuilt(): Promise<boolean> {
  mkdirSync(join(root, 'dist'), { recursive: true });
  for (;;) {
    if (fresh()) return false;
    if (takeLock()) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  try {
    if (fresh()) return false;
    const startedAt = Date.now();
    console.log('compiling the gateway (dist/) …');
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json', '--incremental', '--tsBuildInfoFile', 'dist/.tsbuildinfo'], {
      cwd: root,
      stdio: 'inherit',
    });
    // Stamped with the build's start: a source saved while tsc ran is built by the next start.
    writeFileSync(stamp, '');
    utimesSync(stamp, new Date(startedAt), new Date(startedAt));
    return true;
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}
