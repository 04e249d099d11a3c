/**
 * The embedded AssetStore: one file per asset below `<dir>/objects/` (a key's `/` makes
 * sub-directories), the content type in the file's small header (asset-file.ts). A put writes
 * a temp file in `<dir>/tmp/` (a streamed put as its bytes arrive), fsyncs it and renames it over
 * the target, so a reader sees the old asset or the new one, never a mix or a partial one. A directory emptied by a delete is removed.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, rmSync, statSync } from 'node:fs';
import { access, mkdir, open, rename, rm, rmdir, unlink, type FileHandle } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import { Readable } from 'node:stream';
import { AssetTooLargeError, checkRange, type AssetStore, type ByteRange, type StoredAsset } from '../../ports/asset-store.js';
import { closeFd, fsyncFd, openFd, writeAll } from '../../lib/file-descriptors.js';
import { makeDirectorySync, parentsOfMade, sharedDirectorySyncs } from '../../lib/sync-directory.js';
import { encodeHeader, readAt, readHeader, type AssetFileHeader } from './asset-file.js';
import { assertValidAssetKey, assertValidContentType } from './asset-key.js';

export interface FsAssetStoreOptions {
  /** Root directory (created if missing). */
  dir: string;
}

/** Errors that mean "no asset at this key" (a missing file, or a path through or at a directory). */
const ABSENT = new Set(['ENOENT', 'ENOTDIR', 'EISDIR']);
/** Temp files older than this are leftovers of a crashed put. */
const STALE_TEMP_MS = 60 * 60 * 1000;

const codeOf = (error: unknown): string | undefined => (error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : undefined);

export function createFsAssetStore({ dir }: FsAssetStoreOptions): AssetStore {
  const objects = join(dir, 'objects');
  const temp = join(dir, 'tmp');
  makeDirectorySync(objects);
  makeDirectorySync(temp);
  for (const name of readdirSync(temp)) {
    const path = join(temp, name);
    // Another process sharing the directory may have renamed it into place meanwhile.
    const stat = statSync(path, { throwIfNoEntry: false });
    if (stat && Date.now() - stat.mtimeMs > STALE_TEMP_MS) rmSync(path, { force: true });
  }
  let closed = false;
  const syncDirectory = sharedDirectorySyncs();

  function pathOf(key: string): string {
    if (closed) throw new Error('asset store is closed');
    assertValidAssetKey(key);
    return join(objects, key);
  }

  /** Opens an asset and reads its header; undefined when there is no asset at the key. The caller closes the handle. */
  async function openAsset(key: string): Promise<{ fh: FileHandle; header: AssetFileHeader } | undefined> {
    const path = pathOf(key);
    let fh: FileHandle;
    try {
      fh = await open(path, 'r');
    } catch (error) {
      if (ABSENT.has(codeOf(error) ?? '')) return undefined;
      throw error;
    }
    try {
      if ((await fh.stat()).isFile()) return { fh, header: await readHeader(fh, path) };
    } catch (error) {
      await fh.close();
      throw error;
    }
    await fh.close();
    return undefined;
  }

  /** Runs `use` on an open asset and closes it; undefined when there is no asset at the key. */
  async function withAsset<T>(key: string, use: (fh: FileHandle, header: AssetFileHeader) => Promise<T>): Promise<T | undefined> {
    const opened = await openAsset(key);
    if (!opened) return undefined;
    try {
      return await use(opened.fh, opened.header);
    } finally {
      await opened.fh.close();
    }
  }

  /**
   * Makes the new name durable, not only the bytes: the rename, and each directory the put
   * created, is an entry in its parent directory, which only an fsync of that directory commits.
   * Without it a power loss after the put returned (and after the task settled on it) could lose
   * the file on file systems whose fsync of one file does not commit other changes (btrfs; on
   * ext4 and XFS the settlement's own fsync happened to carry it). The fsyncs run together: on
   * ext4 they join one journal commit. Concurrent puts share their directories' fsyncs
   * (sharedDirectorySyncs): every put into a new task directory changes `tasks/`.
   */
  async function syncEntries(target: string, created: string | undefined): Promise<void> {
    await Promise.all([dirname(target), ...parentsOfMade(dirname(target), created)].map(syncDirectory));
  }

  /** Removes directories left empty below the objects root; stops at the first non-empty one. */
  async function pruneEmptyParents(path: string): Promise<void> {
    for (let parent = dirname(path); parent.startsWith(objects + sep); parent = dirname(parent)) {
      try {
        await rmdir(parent);
      } catch {
        return;
      }
    }
  }

  /**
   * Writes the header and then the bytes of `source` to a temp file as they arrive, fsyncs it
   * and renames it over the target: a failed or oversized source leaves only a temp file, which
   * is removed, so a partial asset never becomes visible.
   */
  async function putFrom(
    key: string,
    source: Iterable<Uint8Array> | AsyncIterable<Uint8Array>,
    contentType: string,
    maxBytes: number | undefined,
  ): Promise<StoredAsset> {
    const target = pathOf(key);
    assertValidContentType(contentType);
    const part = join(temp, `${randomUUID()}.part`);
    let size = 0;
    try {
      // A descriptor, not a FileHandle (file-descriptors.ts says why).
      const fd = await openFd(part, 'wx');
      try {
        // The header goes out with the first chunk: one write for a put of one buffer.
        let header: Buffer | undefined = encodeHeader(contentType);
        for await (const chunk of source) {
          size += chunk.byteLength;
          if (maxBytes !== undefined && size > maxBytes) throw new AssetTooLargeError(key, maxBytes);
          await writeAll(fd, header ? Buffer.concat([header, chunk]) : chunk);
          header = undefined;
        }
        if (header) await writeAll(fd, header);
        await fsyncFd(fd);
      } finally {
        await closeFd(fd);
      }
      // A concurrent delete may prune the fresh directory between mkdir and rename: retry.
      let created: string | undefined;
      for (let attempt = 1; ; attempt++) {
        created = (await mkdir(dirname(target), { recursive: true })) ?? created;
        try {
          await rename(part, target);
          break;
        } catch (error) {
          if (codeOf(error) !== 'ENOENT' || attempt >= 3) throw error;
        }
      }
      await syncEntries(target, created);
    } catch (error) {
      await rm(part, { force: true });
      throw error;
    }
    return { key, contentType, size };
  }

  return {
    put: (key, bytes, contentType) => putFrom(key, [bytes], contentType, undefined),

    putStream: (key, source, contentType, options) => putFrom(key, source, contentType, options?.maxBytes),

    get: (key) =>
      withAsset(key, async (fh, h) => ({
        key,
        contentType: h.contentType,
        size: h.size,
        bytes: await readAt(fh, h.dataStart, h.size),
      })),

    async openRead(key, range?: ByteRange) {
      if (range) checkRange(range);
      const opened = await openAsset(key);
      if (!opened) return undefined;
      const { fh, header: h } = opened;
      const start = Math.min(range?.start ?? 0, h.size);
      const last = Math.min(range?.end ?? h.size - 1, h.size - 1);
      const asset = { key, contentType: h.contentType, size: h.size };
      // Nothing to read (a range past the end, an empty asset): a read stream cannot say so.
      if (last < start) {
        await fh.close();
        return { ...asset, body: Readable.from([]) };
      }
      // The handle goes with the stream: closed when it ends or is destroyed.
      return { ...asset, body: fh.createReadStream({ start: h.dataStart + start, end: h.dataStart + last, autoClose: true }) };
    },

    stat: (key) => withAsset(key, async (_fh, h): Promise<StoredAsset> => ({ key, contentType: h.contentType, size: h.size })),

    async delete(key) {
      const path = pathOf(key);
      try {
        await unlink(path);
      } catch (error) {
        if (ABSENT.has(codeOf(error) ?? '')) return;
        throw error;
      }
      await pruneEmptyParents(path);
    },

    async ping() {
      if (closed) throw new Error('asset store is closed');
      await access(objects);
    },

    async close() {
      closed = true;
    },
  };
}
