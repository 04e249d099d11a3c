/**
 * AssetStore on MongoDB GridFS: one GridFS file per put (streamed puts through an upload
 * stream as their bytes arrive), named by the asset key, the content type in the file's
 * `metadata.contentType`. Keys and content types are validated by the same
 * rules as the local-directory store (src/adapters/fs/asset-key.ts).
 *
 * Replacing a key: GridFS writes the chunks first and the `files` document last, so a visible
 * file is always whole. A put uploads a new file, then deletes every file of that key but the
 * newest (`uploadDate`, then `_id`), which is its own or a concurrent put's that finished later;
 * readers take the newest too. So racing puts leave the version that finished last, whole, and a
 * reader sees the old version or the new one, never a mix. A read whose file is deleted under
 * it (a concurrent replace or delete) looks again.
 */
import { GridFSBucket, MongoClient, type Binary, MongoGridFSChunkError, MongoRuntimeError, type Db, type GridFSFile, type ObjectId } from 'mongodb';
import { once } from 'node:events';
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { AssetTooLargeError, checkRange, type AssetStore, type ByteRange, type StoredAsset } from '../../ports/asset-store.js';
import { assertValidAssetKey, assertValidContentType } from '../fs/asset-key.js';
import { translateRejections } from '../translate-rejections.js';
import { unavailableOnConnectionFailure } from './connection-failure.js';
import { reconnectingAfterClose } from './reconnect.js';

export interface GridFsAssetStoreOptions {
  url: string;
  dbName: string;
  /** GridFS bucket (collections `<bucketName>.files` and `<bucketName>.chunks`). */
  bucketName: string;
}

/** Newest first: the file a reader sees. */
const NEWEST_FIRST = { uploadDate: -1, _id: -1 } as const;
const READ_ATTEMPTS = 3;
/** Chunks fetched per round trip when streaming a file: about 1 MiB at the default 255 KiB chunk size. */
const STREAM_BATCH_CHUNKS = 4;

export function createGridFsAssetStore(options: GridFsAssetStoreOptions): AssetStore {
  const client = new MongoClient(options.url);
  const db: Db = client.db(options.dbName);
  const bucket = new GridFSBucket(db, { bucketName: options.bucketName });
  const chunks = db.collection<{ files_id: ObjectId; n: number; data: Binary }>(`${options.bucketName}.chunks`);
  let closed = false;

  function keyOf(key: string): string {
    if (closed) throw new Error('asset store is closed');
    assertValidAssetKey(key);
    return key;
  }

  async function newest(key: string): Promise<GridFSFile | undefined> {
    const [file] = await bucket.find({ filename: key }).sort(NEWEST_FIRST).limit(1).toArray();
    return file;
  }

  /** Runs `read` on the newest file of the key; looks again when that file vanished meanwhile. */
  async function withNewest<T>(key: string, read: (file: GridFSFile) => Promise<T>): Promise<T | undefined> {
    for (let attempt = 1; ; attempt++) {
      const file = await newest(key);
      if (!file) return undefined;
      try {
        return await read(file);
      } catch (error) {
        if (!isFileGone(error) || attempt >= READ_ATTEMPTS) throw error;
      }
    }
  }

  function download(id: ObjectId): Promise<Buffer> {
    return new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      bucket
        .openDownloadStream(id)
        .on('data', (chunk: Buffer) => chunks.push(chunk))
        .once('error', reject)
        .once('end', () => resolve(Buffer.concat(chunks)));
    });
  }

  /**
   * The bytes [start, end) of a file, read from its chunks a few at a time as the consumer pulls
   * them. Not the driver's GridFSBucketReadStream: it leaves the batch size to the server, and
   * FerretDB answers with every remaining chunk at once (a 192 MiB file grew the api by 228 MB);
   * MongoDB itself sends up to 16 MiB a batch. A chunk missing (the file deleted meanwhile) ends
   * the stream with an error.
   */
  async function* chunkBytes(file: GridFSFile, start: number, end: number): AsyncGenerator<Buffer> {
    if (end <= start) return;
    const size = file.chunkSize;
    const [first, last] = [Math.floor(start / size), Math.floor((end - 1) / size)];
    const cursor = chunks.find({ files_id: file._id, n: { $gte: first, $lte: last } }, { sort: { n: 1 }, batchSize: STREAM_BATCH_CHUNKS });
    try {
      let expected = first;
      for await (const chunk of cursor) {
        if (chunk.n !== expected) throw new MongoGridFSChunkError(`ChunkIsMissing: got chunk #${chunk.n}, expected #${expected}`);
        const data = Buffer.from(chunk.data.read(0, chunk.data.length()));
        yield data.subarray(chunk.n === first ? start - first * size : 0, chunk.n === last ? end - last * size : data.length);
        expected++;
      }
      if (expected !== last + 1) throw new MongoGridFSChunkError(`ChunkIsMissing: expected chunk #${expected}`);
    } finally {
      await cursor.close();
    }
  }

  async function deleteQuietly(id: ObjectId): Promise<void> {
    try {
      await bucket.delete(id);
    } catch (error) {
      if (!isFileGone(error)) throw error;
    }
  }

  /**
   * Uploads the bytes of `source` as they arrive (GridFS upload stream, with its backpressure).
   * GridFS writes the `files` document only when the stream ends, so until then no reader sees
   * the file; a failed or oversized source aborts the upload, which deletes the chunks written.
   */
  async function putFrom(
    key: string,
    source: Iterable<Uint8Array> | AsyncIterable<Uint8Array>,
    contentType: string,
    maxBytes: number | undefined,
  ): Promise<StoredAsset> {
    const filename = keyOf(key);
    assertValidContentType(contentType);
    const upload = bucket.openUploadStream(filename, { metadata: { contentType } });
    // Remembered at once, so an error emitted while nobody waits is not an unhandled one.
    const failed = new Promise<never>((_, reject) => upload.once('error', reject));
    failed.catch(() => undefined);
    let size = 0;
    try {
      for await (const chunk of source) {
        size += chunk.byteLength;
        if (maxBytes !== undefined && size > maxBytes) throw new AssetTooLargeError(key, maxBytes);
        if (chunk.byteLength === 0) continue;
        if (!upload.write(chunk)) await Promise.race([once(upload, 'drain'), failed]);
      }
      upload.end();
      // Resolves once the files document is written (the file is visible), rejects on any error.
      await finished(upload);
    } catch (error) {
      if (!upload.state.aborted && !upload.done) await upload.abort().catch(() => undefined);
      throw error;
    }
    // Keep only the newest version of the key: this one, or a concurrent put's that finished later.
    const [, ...older] = await bucket.find({ filename }).sort(NEWEST_FIRST).toArray();
    for (const file of older) await deleteQuietly(file._id);
    return { key, contentType, size };
  }

  const store: AssetStore = {
    put: (key, bytes, contentType) => putFrom(key, [bytes], contentType, undefined),

    putStream: (key, source, contentType, options) => putFrom(key, source, contentType, options?.maxBytes),

    // async, so an invalid key is a rejected promise like every other operation's, not a throw.
    get: async (key) =>
      withNewest(keyOf(key), async (file) => ({
        ...describe(key, file),
        bytes: file.length === 0 ? Buffer.alloc(0) : await download(file._id),
      })),

    async stat(key) {
      const file = await newest(keyOf(key));
      return file ? describe(key, file) : undefined;
    },

    async openRead(key, range?: ByteRange) {
      if (range) checkRange(range);
      const file = await newest(keyOf(key));
      if (!file) return undefined;
      const start = Math.min(range?.start ?? 0, file.length);
      const end = Math.max(start, Math.min((range?.end ?? file.length - 1) + 1, file.length));
      return { ...describe(key, file), body: Readable.from(chunkBytes(file, start, end)) };
    },

    async delete(key) {
      const filename = keyOf(key);
      const files = await bucket.find({ filename }).toArray();
      for (const file of files) await deleteQuietly(file._id);
    },

    async ping() {
      if (closed) throw new Error('asset store is closed');
      await db.command({ ping: 1 });
    },

    async close() {
      if (closed) return;
      closed = true;
      await client.close();
    },
  };
  // A dropped connection or an unreachable server is StoreUnavailableError, whatever the call.
  return translateRejections(reconnectingAfterClose(store, client), unavailableOnConnectionFailure);
}

function describe(key: string, file: GridFSFile): StoredAsset {
  const contentType: unknown = file.metadata?.contentType;
  return {
    key,
    contentType: typeof contentType === 'string' ? contentType : 'application/octet-stream',
    size: file.length,
  };
}

/**
 * A file deleted under a reader: GridFS reports a missing files document as a runtime error
 * (`FileNotFound…`, `File not found for id…`), and chunks removed mid-read as ChunkIsMissing.
 */
function isFileGone(error: unknown): boolean {
  if (error instanceof MongoGridFSChunkError) return /ChunkIsMissing/.test(error.message);
  return error instanceof MongoRuntimeError && /file not found|FileNotFound/i.test(error.message);
}
