/**
 * A file made once by whichever of several processes gets there first, never seen half written:
 * the content goes to a file of this process's own beside it, which is then hard-linked into
 * place (a link fails when the name exists, and appears with its whole content). `flag: 'wx'`
 * alone creates the name first and writes after: a process starting beside it on the same
 * DATA_DIR could read an empty secret in between.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, linkSync, unlinkSync, writeFileSync } from 'node:fs';

/** Writes `content` at `path` unless a file is there already; true when this call made it. */
export function createFileOnce(path: string, content: string, mode: number): boolean {
  if (existsSync(path)) return false;
  const own = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(own, content, { mode, flag: 'wx' });
  try {
    linkSync(own, path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    unlinkSync(own);
  }
}
