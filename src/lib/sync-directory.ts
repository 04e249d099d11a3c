/**
 * fsync of a directory: what makes a name made in it (a create, rename or link) durable on every
 * file system (an fsync of the file commits its bytes, not its name). A file system that cannot
 * sync a directory (EINVAL) has nothing to commit.
 */
import { closeSync, fsyncSync, openSync } from 'node:fs';
import { open } from 'node:fs/promises';

const refusedByFileSystem = (error: unknown): boolean => error instanceof Error && 'code' in error && error.code === 'EINVAL';

export async function syncDirectory(path: string): Promise<void> {
  const fh = await open(path, 'r');
  try {
    await fh.sync();
  } catch (error) {
    if (!refusedByFileSystem(error)) throw error;
  } finally {
    await fh.close();
  }
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
