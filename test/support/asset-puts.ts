/**
 * Three puts into a fresh local asset store at argv[2], one after the other, for a test that
 * watches the store's system calls (test/contract/asset-store-durability.fs.int.test.ts): into
 * two new directories, into an existing one, and into one new directory beside it.
 */
import { createFsAssetStore } from '../../src/adapters/fs/asset-store.js';

const store = createFsAssetStore({ dir: process.argv[2]! });
await store.put('tasks/t1/0.png', Buffer.from('first'), 'image/png');
await store.put('tasks/t1/1.png', Buffer.from('second'), 'image/png');
await store.putStream(
  'tasks/t2/0.png',
  (async function* () {
    yield Buffer.from('third');
  })(),
  'image/png',
);
await store.close();
