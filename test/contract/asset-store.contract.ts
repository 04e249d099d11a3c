/** The AssetStore contract: one suite every adapter runs (local directory now, GridFS later). */
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AssetStore } from '../../src/ports/asset-store.js';

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

    it('returns an inclusive byte range, clamped at the end of the asset', async () => {
      const bytes = randomBytes(5000);
      await store.put('video/v.mp4', bytes, 'video/mp4');
      expect((await store.getRange('video/v.mp4', 0, 0))?.equals(bytes.subarray(0, 1))).toBe(true);
      expect((await store.getRange('video/v.mp4', 100, 4099))?.equals(bytes.subarray(100, 4100))).toBe(true);
      expect((await store.getRange('video/v.mp4', 4990, 9999))?.equals(bytes.subarray(4990))).toBe(true);
      expect((await store.getRange('video/v.mp4', 5000, 5010))?.length).toBe(0);
    });

    it('refuses a negative or reversed byte range', async () => {
      await store.put('r.bin', randomBytes(10), 'application/octet-stream');
      await expect(store.getRange('r.bin', -1, 3)).rejects.toThrow(RangeError);
      await expect(store.getRange('r.bin', 5, 4)).rejects.toThrow(RangeError);
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
      expect(await store.getRange('missing/key.png', 0, 10)).toBeUndefined();
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
        await expect(store.getRange(key, 0, 0)).rejects.toThrow(/invalid asset key/);
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

    it('answers ping while open', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });
  });
}
