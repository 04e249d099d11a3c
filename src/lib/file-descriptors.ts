/**
 * Files through plain descriptors and the callback API, not fs/promises' FileHandle: a
 * FileHandle is an object of its own with close tracking, and a put's calls through it took
 * about a third more of the event loop's time (re-hosting puts several files a call;
 * bench/asset-puts.ts).
 */
import { close, fsync, open, write } from 'node:fs';
import { promisify } from 'node:util';

export const openFd = promisify(open);
export const fsyncFd = promisify(fsync);
export const closeFd = promisify(close);
const writeFd = promisify(write);

/** Writes all of `bytes` at the file's current offset (a write may take fewer bytes than it is given). */
export async function writeAll(fd: number, bytes: Uint8Array): Promise<void> {
  for (let offset = 0; offset < bytes.byteLength;) offset += (await writeFd(fd, bytes, offset, bytes.byteLength - offset)).bytesWritten;
}
