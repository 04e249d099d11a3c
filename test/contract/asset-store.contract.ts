/** The AssetStore contract: one suite every adapter runs (local directory now, GridFS later). */
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AssetTooLargeError, type AssetStore } from '../../src/ports/asset-store.js';

export interface AssetStoreFixture {
  store: AssetStore;
  cleanup(): Promise<void>;
}

export const INVALID_KEYS: readonly string[] = [
  '',
  '../escape',
  'a/../../escape',
  'a/..',
  '..',
  '/absolute/path',
  'trailing/',
  'double//slash',
  './dot',
  'back\\slash',
  'white space',
  'ünïcode',
  'semi;colon',
  'x'.repeat(1025),
];

/** `bytes` in chunks of `chunk` bytes, each handed out after a turn of the event loop. */
async function* chunked(bytes: Buffer, chunk: number): AsyncGenerator<Buffer> {
  for (let i = 0; i < bytes.length; i += chunk) {
    await new Promise((r) => setImmediate(r));
    yield bytes.subarray(i, i + chunk);
  }
}

/** Hands out `bytes`, then fails (a download that broke off). */
async function* brokenAfter(bytes: Buffer): AsyncGenerator<Buffer> {
  yield* chunked(bytes, 1000);
  throw new Error('connection reset');
}

/** The bytes of [start, end] (inclusive) read through openRead; undefined when there is no asset. */
async function readRange(store: AssetStore, key: string, start: number, end: number): Promise<Buffer | undefined> {
  const opened = await store.openRead(key, { start, end });
  if (!opened) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of opened.body) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

export function assetStoreContract(name: string, factory: () => Promise<AssetStoreFixture>): void {
  describe(`AssetStore contract: ${name}`, () => {
    let fixture: AssetStoreFixture;
    let store: AssetStore;

    beforeEach(async () => {
      fixture = await factory();
      store = fixture.store;
    });

    afterEach(async () => {
      await fixture.cleanup();
    });

    it('gives back the bytes, content type and size that were put', async () => {
      const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
      await expect(store.put('tasks/t1/0.png', bytes, 'image/png')).resolves.toEqual({
        key: 'tasks/t1/0.png',
        contentType: 'image/png',
        size: 256,
      });
      const got = await store.get('tasks/t1/0.png');
      expect(got).toMatchObject({ key: 'tasks/t1/0.png', contentType: 'image/png', size: 256 });
      expect(got?.bytes.equals(bytes)).toBe(true);
    });

    it('round-trips a content type with parameters and an empty asset', async () => {
      await store.put('empty.txt', Buffer.alloc(0), 'text/plain; charset=utf-8');
      const got = await store.get('empty.txt');
      expect(got?.contentType).toBe('text/plain; charset=utf-8');
      expect(got?.size).toBe(0);
      expect(got?.bytes.length).toBe(0);
    });

    it('reports metadata on stat without the bytes', async () => {
      await store.put('audio/a.wav', randomBytes(1000), 'audio/wav');
      const stat = await store.stat('audio/a.wav');
      expect(stat).toEqual({ key: 'audio/a.wav', contentType: 'audio/wav', size: 1000 });
      expect(stat).not.toHaveProperty('bytes');
    });

    it('reads an inclusive byte range of a small asset, clamped at the end of the asset', async () => {
      const bytes = randomBytes(5000);
      await store.put('video/v.mp4', bytes, 'video/mp4');
      expect((await readRange(store, 'video/v.mp4', 0, 0))?.equals(bytes.subarray(0, 1))).toBe(true);
      expect((await readRange(store, 'video/v.mp4', 100, 4099))?.equals(bytes.subarray(100, 4100))).toBe(true);
      expect((await readRange(store, 'video/v.mp4', 4990, 9999))?.equals(bytes.subarray(4990))).toBe(true);
      expect((await readRange(store, 'video/v.mp4', 5000, 5010))?.length).toBe(0);
    });

    it('refuses a negative or reversed byte range', async () => {
      await store.put('r.bin', randomBytes(10), 'application/octet-stream');
      await expect(store.openRead('r.bin', { start: -1, end: 3 })).rejects.toThrow(RangeError);
      await expect(store.openRead('r.bin', { start: 5, end: 4 })).rejects.toThrow(RangeError);
    });

    it('streams the whole asset or an inclusive range of it, clamped at the end, with the whole size', async () => {
      const bytes = randomBytes(700 * 1024); // past one GridFS chunk (255 KiB)
      await store.put('video/s.mp4', bytes, 'video/mp4');
      const read = async (range?: { start: number; end: number }) => {
        const opened = await store.openRead('video/s.mp4', range);
        if (!opened) throw new Error('no asset');
        const chunks: Buffer[] = [];
        for await (const chunk of opened.body) chunks.push(Buffer.from(chunk as Uint8Array));
        return { ...opened, bytes: Buffer.concat(chunks) };
      };
      const whole = await read();
      expect({ key: whole.key, contentType: whole.contentType, size: whole.size }).toEqual({
        key: 'video/s.mp4',
        contentType: 'video/mp4',
        size: bytes.length,
      });
      expect(whole.bytes.equals(bytes)).toBe(true);
      expect((await read({ start: 0, end: 0 })).bytes.equals(bytes.subarray(0, 1))).toBe(true);
      expect((await read({ start: 300_000, end: 600_000 })).bytes.equals(bytes.subarray(300_000, 600_001))).toBe(true);
      const tail = await read({ start: bytes.length - 10, end: bytes.length + 99 });
      expect(tail.bytes.equals(bytes.subarray(bytes.length - 10))).toBe(true);
      expect(tail.size).toBe(bytes.length);
      expect((await read({ start: bytes.length, end: bytes.length + 5 })).bytes.length).toBe(0);
      expect(await store.openRead('video/none.mp4')).toBeUndefined();
      await store.put('empty.bin', Buffer.alloc(0), 'application/octet-stream');
      const empty = await store.openRead('empty.bin');
      const emptyChunks: unknown[] = [];
      for await (const chunk of empty!.body) emptyChunks.push(chunk);
      expect(emptyChunks.join('')).toBe('');
    });

    it('replaces bytes and content type when a key is put again', async () => {
      await store.put('same', Buffer.from('first version, longer'), 'text/plain');
      await store.put('same', Buffer.from('second'), 'application/json');
      const got = await store.get('same');
      expect(got?.contentType).toBe('application/json');
      expect(got?.bytes.toString()).toBe('second');
      expect(await store.stat('same')).toEqual({ key: 'same', contentType: 'application/json', size: 6 });
    });

    it('leaves one whole version when puts to one key race', async () => {
      const versions = Array.from({ length: 8 }, (_, i) => Buffer.alloc(1000 * (i + 1), i));
      await Promise.all(versions.map((v, i) => store.put('raced', v, `application/x-v${i}`)));
      const got = await store.get('raced');
      const i = versions.findIndex((v) => got?.bytes.equals(v));
      expect(i).toBeGreaterThanOrEqual(0);
      expect(got?.contentType).toBe(`application/x-v${i}`);
    });

    it('answers undefined for a key that was never put', async () => {
      expect(await store.get('missing/key.png')).toBeUndefined();
      expect(await store.stat('missing/key.png')).toBeUndefined();
      expect(await store.openRead('missing/key.png', { start: 0, end: 10 })).toBeUndefined();
    });

    it('keeps keys that share a prefix apart', async () => {
      await store.put('t/1/a.png', Buffer.from('a'), 'image/png');
      await store.put('t/1/b.png', Buffer.from('b'), 'image/png');
      await store.delete('t/1/a.png');
      expect(await store.get('t/1/a.png')).toBeUndefined();
      expect((await store.get('t/1/b.png'))?.bytes.toString()).toBe('b');
      expect(await store.get('t/1')).toBeUndefined();
    });

    it('deletes an asset, and deleting a missing or deleted key is not an error', async () => {
      await store.put('gone/x.bin', Buffer.from('x'), 'application/octet-stream');
      await store.delete('gone/x.bin');
      expect(await store.get('gone/x.bin')).toBeUndefined();
      expect(await store.stat('gone/x.bin')).toBeUndefined();
      await expect(store.delete('gone/x.bin')).resolves.toBeUndefined();
      await expect(store.delete('never/was.bin')).resolves.toBeUndefined();
    });

    it('can put a key again after deleting it', async () => {
      await store.put('again/k', Buffer.from('one'), 'text/plain');
      await store.delete('again/k');
      await store.put('again/k', Buffer.from('two'), 'text/plain');
      expect((await store.get('again/k'))?.bytes.toString()).toBe('two');
    });

    it.each(INVALID_KEYS.map((key) => [key.length > 40 ? `${key.slice(0, 10)}…(${key.length} chars)` : key, key]))(
      'refuses the invalid key %j for every operation',
      async (_label, key) => {
        await expect(store.put(key, Buffer.from('x'), 'text/plain')).rejects.toThrow(/invalid asset key/);
        await expect(store.get(key)).rejects.toThrow(/invalid asset key/);
        await expect(store.stat(key)).rejects.toThrow(/invalid asset key/);
        await expect(store.openRead(key, { start: 0, end: 0 })).rejects.toThrow(/invalid asset key/);
        await expect(store.delete(key)).rejects.toThrow(/invalid asset key/);
      },
    );

    it('accepts keys made of letters, digits, dots, dashes, underscores and slashes', async () => {
      for (const key of ['A-z_0.9', 'a/b/c/d.e-f_g', 'v1.2.3/file.tar.gz']) {
        await store.put(key, Buffer.from(key), 'text/plain');
        expect((await store.get(key))?.bytes.toString()).toBe(key);
      }
    });

    it('refuses a content type that is empty or not printable ASCII', async () => {
      await expect(store.put('ct', Buffer.from('x'), '')).rejects.toThrow();
      await expect(store.put('ct', Buffer.from('x'), 'text/plain\r\nx-injected: 1')).rejects.toThrow();
      expect(await store.get('ct')).toBeUndefined();
    });

    describe('streamed puts', () => {
      it('stores a stream of many chunks whole, with its size', async () => {
        const bytes = randomBytes(3 * 1024 * 1024 + 17);
        await expect(store.putStream('stream/big.bin', chunked(bytes, 64 * 1024), 'application/octet-stream')).resolves.toEqual({
          key: 'stream/big.bin',
          contentType: 'application/octet-stream',
          size: bytes.length,
        });
        const got = await store.get('stream/big.bin');
        expect(got?.size).toBe(bytes.length);
        expect(got?.bytes.equals(bytes)).toBe(true);
        expect((await readRange(store, 'stream/big.bin', 1_000_000, 1_000_099))?.equals(bytes.subarray(1_000_000, 1_000_100))).toBe(true);
      });

      it('stores an empty stream as an empty asset', async () => {
        await store.putStream('stream/empty', chunked(Buffer.alloc(0), 10), 'text/plain');
        expect(await store.stat('stream/empty')).toEqual({ key: 'stream/empty', contentType: 'text/plain', size: 0 });
      });

      it('accepts exactly maxBytes', async () => {
        const bytes = randomBytes(4096);
        await store.putStream('stream/exact', chunked(bytes, 1000), 'application/octet-stream', { maxBytes: 4096 });
        expect((await store.get('stream/exact'))?.bytes.equals(bytes)).toBe(true);
      });

      it('refuses a stream past maxBytes and keeps nothing of it', async () => {
        const put = store.putStream('stream/too-big', chunked(randomBytes(10_000), 1000), 'application/octet-stream', { maxBytes: 4096 });
        await expect(put).rejects.toBeInstanceOf(AssetTooLargeError);
        expect(await store.get('stream/too-big')).toBeUndefined();
        expect(await store.stat('stream/too-big')).toBeUndefined();
      });

      it('stops reading the source once it is past maxBytes', async () => {
        let handedOut = 0;
        async function* endless(): AsyncGenerator<Buffer> {
          for (;;) {
            handedOut++;
            yield Buffer.alloc(1000);
          }
        }
        await expect(store.putStream('stream/endless', endless(), 'application/octet-stream', { maxBytes: 10_000 })).rejects.toBeInstanceOf(AssetTooLargeError);
        expect(handedOut).toBeLessThanOrEqual(12);
      });

      it('leaves nothing visible when the source fails midway', async () => {
        await expect(store.putStream('stream/broken', brokenAfter(randomBytes(5000)), 'image/png')).rejects.toThrow(/connection reset/);
        expect(await store.get('stream/broken')).toBeUndefined();
        expect(await store.stat('stream/broken')).toBeUndefined();
      });

      it('keeps the earlier version whole when a replacing stream fails or is too large', async () => {
        const first = randomBytes(2000);
        await store.put('stream/kept', first, 'image/png');
        await expect(store.putStream('stream/kept', brokenAfter(randomBytes(5000)), 'image/jpeg')).rejects.toThrow();
        await expect(store.putStream('stream/kept', chunked(randomBytes(9000), 1000), 'image/jpeg', { maxBytes: 3000 })).rejects.toBeInstanceOf(
          AssetTooLargeError,
        );
        const got = await store.get('stream/kept');
        expect(got?.contentType).toBe('image/png');
        expect(got?.bytes.equals(first)).toBe(true);
      });

      it('replaces an earlier version when it ends whole', async () => {
        await store.put('stream/replaced', Buffer.from('old'), 'text/plain');
        await store.putStream('stream/replaced', chunked(Buffer.from('new and longer'), 3), 'text/markdown');
        const got = await store.get('stream/replaced');
        expect(got?.contentType).toBe('text/markdown');
        expect(got?.bytes.toString()).toBe('new and longer');
      });

      it('checks the key and content type before reading the source', async () => {
        let read = false;
        async function* watched(): AsyncGenerator<Buffer> {
          read = true;
          yield Buffer.from('x');
        }
        await expect(store.putStream('../escape', watched(), 'text/plain')).rejects.toThrow(/invalid asset key/);
        await expect(store.putStream('fine/key', watched(), 'text/plain\r\nx: 1')).rejects.toThrow();
        expect(read).toBe(false);
        expect(await store.get('fine/key')).toBeUndefined();
      });
    });

    it('answers ping while open', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });
  });
}
