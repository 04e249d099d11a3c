/**
 * fsync of a directory: what makes a name made in it (a create, rename or link) durable on every
 * file system (an fsync of the file commits its bytes, not its name). A file system that cannot
 * sync a directory (EINVAL) has nothing to commit.
 */
import { closeSync, fsyncSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { closeFd, fsyncFd, openFd } from './file-descriptors.js';

const refusedByFileSystem = (error: unknown): boolean => error instanceof Error && 'code' in error && error.code === 'EINVAL';

export async function syncDirectory(path: string): Promise<void> {
  const fd = await openFd(path, 'r');
  try {
    await fsyncFd(fd);
  } catch (error) {
    if (!refusedByFileSystem(error)) throw error;
  } finally {
    await closeFd(fd);
  }
}

/**
 * syncDirectory shared by concurrent callers: a caller that arrives while an fsync of the same
 * directory runs waits for the next one, which starts once that one ends (the running one may
 * have begun before the caller's change), and every caller waiting then shares it. Puts into
 * new task directories all change their common parent: under load one fsync of it serves many
 * puts instead of one each (each fsync of a directory is three system calls on the thread pool).
 */
export function sharedDirectorySyncs(sync: (path: string) => Promise<void> = syncDirectory): (path: string) => Promise<void> {
  /** The fsync of a directory running now, and the one queued behind it for callers that came meanwhile. */
  type InFlight = { running: Promise<void>; next?: Promise<void> };
  const inFlight = new Map<string, InFlight>();
  const start = (path: string): Promise<void> => {
    const entry: InFlight = { running: sync(path) };
    inFlight.set(path, entry);
    // Registered before any caller's `next` below: an entry with a next one queued stays until it starts.
    const settled = () => {
      if (inFlight.get(path) === entry && entry.next === undefined) inFlight.delete(path);
    };
    entry.running.then(settled, settled);
    return entry.running;
  };
  return (path) => {
    const entry = inFlight.get(path);
    if (!entry) return start(path);
    entry.next ??= entry.running.then(
      () => start(path),
      () => start(path),
    );
    return entry.next;
  };
}

/** The same, blocking: for start-up, before the loop serves anything. */
export function syncDirectorySync(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } catch (error) {
    if (!refusedByFileSystem(error)) throw error;
  } finally {
    closeSync(fd);
  }
}

/**
 * The parent of each directory that `mkdir -p path` made, deepest first: the entries a power loss
 * could take with them. `first` is what the mkdir returned (the topmost directory it made, or
 * undefined when it made none).
 */
export function parentsOfMade(path: string, first: string | undefined): string[] {
  const parents: string[] = [];
  if (first === undefined) return parents;
  for (let made = path; ; made = dirname(made)) {
    parents.push(dirname(made));
    if (made === first || dirname(made) === made) return parents;
  }
}

/**
 * `mkdir -p` whose new directories survive a power loss: each one is an entry in its parent, so
 * the parent of every directory made is fsynced (blocking: for start-up). Files made in them
 * later are then never lost with a directory that was never committed.
 */
export function makeDirectorySync(path: string): void {
  for (const parent of parentsOfMade(path, mkdirSync(path, { recursive: true }))) syncDirectorySync(parent);
}
