/** AssetStore port: immutable bytes under a key (results re-hosted by the gateway). */
export interface StoredAsset {
  key: string;
  contentType: string;
  size: number;
}

export interface AssetStore {
  put(key: string, bytes: Buffer, contentType: string): Promise<StoredAsset>;
  get(key: string): Promise<(StoredAsset & { bytes: Buffer }) | undefined>;
  /** Metadata only, without reading the bytes. */
  stat(key: string): Promise<StoredAsset | undefined>;
  /** A byte range [start, end] inclusive, for HTTP range requests. */
  getRange(key: string, start: number, end: number): Promise<Buffer | undefined>;
  /** Idempotent: deleting a missing key is not an error. */
  delete(key: string): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
