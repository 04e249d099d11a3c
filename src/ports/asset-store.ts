/** AssetStore port: immutable bytes under a key (results re-hosted by the gateway). */
import type { Readable } from 'node:stream';

export interface StoredAsset {
  key: string;
  contentType: string;
  size: number;
}

/** Bytes [start, end], both inclusive, as in HTTP's Range. */
export interface ByteRange {
  start: number;
  end: number;
}

/** A range's bounds checked (the same refusal in every adapter). */
export function checkRange(range: ByteRange): void {
  const { start, end } = range;
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start) throw new RangeError(`invalid byte range ${start}-${end}`);
}

export interface PutStreamOptions {
  /** Largest asset accepted: past it the put fails with AssetTooLargeError. */
  maxBytes?: number;
}

/** A streamed put passed its `maxBytes`; nothing of it was kept. */
export class AssetTooLargeError extends Error {
  constructor(
    readonly key: string,
    readonly maxBytes: number,
  ) {
    super(`asset ${key} is over the ${maxBytes} byte limit`);
    this.name = 'AssetTooLargeError';
  }
}

export interface AssetStore {
  put(key: string, bytes: Buffer, contentType: string): Promise<StoredAsset>;
  /**
   * Stores the bytes of `source` as they arrive, without holding them all. The asset becomes
   * visible only once `source` ended whole: when `source` fails, or passes `maxBytes`, the put
   * rejects and leaves nothing new under the key (an earlier version stays as it was). The key
   * and content type are checked before `source` is read.
   */
  putStream(key: string, source: AsyncIterable<Uint8Array>, contentType: string, options?: PutStreamOptions): Promise<StoredAsset>;
  get(key: string): Promise<(StoredAsset & { bytes: Buffer }) | undefined>;
  /** Metadata only, without reading the bytes. */
  stat(key: string): Promise<StoredAsset | undefined>;
  /**
   * The asset's bytes as a stream that reads as it is consumed, so a download holds a chunk at a
   * time whatever the asset's size: the whole asset, or `range` [start, end] inclusive (clamped
   * to the asset; `size` stays the whole asset's). Undefined when there is no asset.
   */
  openRead(key: string, range?: ByteRange): Promise<(StoredAsset & { body: Readable }) | undefined>;
  /** Idempotent: deleting a missing key is not an error. */
  delete(key: string): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
