/**
 * One asset in one file, so bytes and content type are replaced together by a single rename:
 * `GWA1` magic, uint16 (big-endian) header length, UTF-8 JSON header `{"contentType":…}`, bytes.
 */
import type { FileHandle } from 'node:fs/promises';

const MAGIC = Buffer.from('GWA1', 'ascii');
const PREFIX = MAGIC.length + 2;

export interface AssetFileHeader {
  contentType: string;
  /** File offset of the first byte of the asset. */
  dataStart: number;
  /** Bytes of the asset (the file minus its header). */
  size: number;
}

export function encodeHeader(contentType: string): Buffer {
  const json = Buffer.from(JSON.stringify({ contentType }), 'utf8');
  const prefix = Buffer.alloc(PREFIX);
  MAGIC.copy(prefix);
  prefix.writeUInt16BE(json.length, MAGIC.length);
  return Buffer.concat([prefix, json]);
}

/** Reads exactly `length` bytes at `position`, or fewer only at end of file. */
export async function readAt(fh: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await fh.read(buffer, filled, length - filled, position + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return filled === length ? buffer : buffer.subarray(0, filled);
}

export async function readHeader(fh: FileHandle, path: string): Promise<AssetFileHeader> {
  const corrupt = (): Error => new Error(`not an asset file: ${path}`);
  const { size: total } = await fh.stat();
  const prefix = await readAt(fh, 0, PREFIX);
  if (prefix.length < PREFIX || !prefix.subarray(0, MAGIC.length).equals(MAGIC)) throw corrupt();
  const headerLength = prefix.readUInt16BE(MAGIC.length);
  const json = await readAt(fh, PREFIX, headerLength);
  if (json.length < headerLength) throw corrupt();
  const header: unknown = JSON.parse(json.toString('utf8'));
  if (typeof header !== 'object' || header === null || !('contentType' in header) || typeof header.contentType !== 'string') {
    throw corrupt();
  }
  const dataStart = PREFIX + headerLength;
  return { contentType: header.contentType, dataStart, size: total - dataStart };
}
