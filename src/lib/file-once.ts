/**
 * A file made once by whichever of several processes gets there first, never seen half written,
 * and durable before anyone reads it: the content goes to a file of this process's own beside
 * it, fsynced, then hard-linked into place (a link fails when the name exists, and appears with
 * its whole content), and the directory is fsynced so the name survives a power loss. `flag:
 * 'wx'` alone creates the name first and writes after: a process starting beside it on the same
 * DATA_DIR could read an empty secret in between. These files are secrets that data is encrypted
 * or signed with: one lost after its first use would leave that data unreadable.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, linkSync, openSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { syncDirectorySync } from './sync-directory.js';

function writeDurably(path: string, content: string, mode: number): void {
  const fd = openSync(path, 'wx', mode);
  try {
    writeFileSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Writes `content` at `path` unless a file is there already; true when this call made it. */
export function createFileOnce(path: string, content: string, mode: number): boolean {
  // The directory is synced whoever made the file: a maker killed between its link and its sync
  // leaves a name that is visible (and read by this process) but not yet durable.
  if (existsSync(path)) {
    syncDirectorySync(dirname(path));
    return false;
  }
  const own = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeDurably(own, content, mode);
  try {
    linkSync(own, path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    unlinkSync(own);
    syncDirectorySync(dirname(path));
  }
}
