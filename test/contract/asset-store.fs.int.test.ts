import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createFsAssetStore } from '../../src/adapters/fs/asset-store.js';
import { tempDir } from '../support/tmp.js';
import { assetStoreContract } from './asset-store.contract.js';

assetStoreContract('local directory', async () => {
  const dir = tempDir('assets-contract-');
  const store = createFsAssetStore({ dir: dir.path });
  return {
    store,
    async cleanup() {
      await store.close();
      dir.remove();
    },
  };
});

describe('local directory asset store', () => {
  const dirs: Array<{ path: string; remove(): void }> = [];
  const newDir = (): string => {
    const dir = tempDir('assets-fs-');
    dirs.push(dir);
    return dir.path;
  };
  afterEach(() => {
    for (const dir of dirs.splice(0)) dir.remove();
  });

  it('keeps assets in sub-directories of its directory and leaves no temp files behind', async () => {
    const dir = newDir();
    const store = createFsAssetStore({ dir });
    await store.put('tasks/t1/0.png', Buffer.from('png'), 'image/png');
    expect(existsSync(join(dir, 'objects', 'tasks', 't1', '0.png'))).toBe(true);
    expect(readdirSync(join(dir, 'tmp'))).toEqual([]);
  });

  it('leaves no temp file behind when a streamed put fails or is too large', async () => {
    const dir = newDir();
    const store = createFsAssetStore({ dir });
    async function* broken(): AsyncGenerator<Buffer> {
      yield Buffer.alloc(5000);
      throw new Error('connection reset');
    }
    await expect(store.putStream('tasks/t3/0.png', broken(), 'image/png')).rejects.toThrow(/connection reset/);
    await expect(
      store.putStream(
        'tasks/t3/1.png',
        (async function* () {
          yield Buffer.alloc(5000);
        })(),
        'image/png',
        { maxBytes: 10 },
      ),
    ).rejects.toThrow(/byte limit/);
    expect(readdirSync(join(dir, 'tmp'))).toEqual([]);
    expect(existsSync(join(dir, 'objects', 'tasks', 't3'))).toBe(false);
  });

  it('removes directories that a delete leaves empty', async () => {
    const dir = newDir();
    const store = createFsAssetStore({ dir });
    await store.put('tasks/t2/0.png', Buffer.from('png'), 'image/png');
    await store.delete('tasks/t2/0.png');
    expect(readdirSync(join(dir, 'objects'))).toEqual([]);
  });

  it('finds its assets again when reopened on the same directory', async () => {
    const dir = newDir();
    await createFsAssetStore({ dir }).put('kept/a.wav', Buffer.from('wav'), 'audio/wav');
    const reopened = createFsAssetStore({ dir });
    expect(await reopened.stat('kept/a.wav')).toEqual({ key: 'kept/a.wav', contentType: 'audio/wav', size: 3 });
  });

  it('refuses to work once closed', async () => {
    const store = createFsAssetStore({ dir: newDir() });
    await store.close();
    await expect(store.get('a')).rejects.toThrow(/closed/);
    await expect(store.ping()).rejects.toThrow(/closed/);
  });
});
