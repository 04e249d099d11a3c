/**
 * Puts into a fresh local asset store at argv[2] for a test that watches the store's system
 * calls (test/contract/asset-store-durability.fs.int.test.ts): three one after the other (into
 * two new directories, into an existing one, and into one new directory beside it), then eight
 * at once, each into a new directory of its own (they share the fsyncs of `tasks/`).
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
await Promise.all(Array.from({ length: 8 }, (_, i) => store.put(`tasks/c${i}/0.png`, Buffer.from(`concurrent ${i}`), 'image/png')));
await store.close();
