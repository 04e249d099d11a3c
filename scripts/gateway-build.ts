/**
 * The gateway compiled to plain JavaScript (`dist/`, as `npm run build` writes it) whenever its
 * sources changed since the last build: `npm start` runs the compiled gateway, not the sources
 * under a TypeScript loader (decision 0148: the loader costs about 35 MB in each of the three
 * processes and its start time in each). A build already fresh costs one walk of the sources'
 * modification times. Two starts at once build once: the second waits for the first's lock.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The checkout whose dist/ `npm start` runs. */
const repositoryRoot = fileURLToPath(new URL('..', import.meta.url));
/** What the compiled gateway is made of (tsconfig.build.json's `include`, its configs and dependencies). */
const inputs = ['src', 'projections', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json'];
/** A lock whose holder cannot be told alive (no pid written yet) is taken over after this. */
const UNKNOWN_HOLDER_MS = 30_000;

function newestModified(path: string): number {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestModified(join(path, entry)));
  return newest;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it runs, as another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid in the lock; 0 while it has none yet (or the lock went meanwhile). */
function holderOf(lock: string): number {
  try {
    return Number(readFileSync(join(lock, 'pid'), 'utf8').trim()) || 0;
  } catch {
    return 0;
  }
}

/**
 * The build lock, a directory holding its holder's pid. A build stopped by Ctrl-C or a kill
 * leaves it behind: a holder that no longer runs loses it at once, so the next start builds
 * instead of waiting.
 */
function takeLock(lock: string): boolean {
  try {
    mkdirSync(lock);
    writeFileSync(join(lock, 'pid'), String(process.pid));
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const holder = holderOf(lock);
    const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
    if (holder > 0 ? !alive(holder) : age > UNKNOWN_HOLDER_MS) rmSync(lock, { recursive: true, force: true });
    return false;
  }
}

/** Builds dist/ unless it is fresh; true when it built. Throws (tsc's own messages on stderr) when the sources do not compile. */
export async function ensureGatewayBuilt(root: string = repositoryRoot): Promise<boolean> {
  /** Written after a build that succeeded: the sources older than it are in dist/. */
  const stamp = join(root, 'dist', '.built');
  const lock = join(root, 'dist', '.building');
  const fresh = () => {
    const built = statSync(stamp, { throwIfNoEntry: false })?.mtimeMs ?? 0;
    return built > 0 && inputs.every((input) => newestModified(join(root, input)) <= built);
  };
  mkdirSync(join(root, 'dist'), { recursive: true });
  let told = false;
  for (;;) {
    if (fresh()) return false;
    if (takeLock(lock)) break;
    if (!told) console.log('waiting for another start that is compiling the gateway …');
    told = true;
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
