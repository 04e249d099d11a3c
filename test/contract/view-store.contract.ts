/**
 * The ViewStore contract: every adapter (SQLite, MongoDB) runs these same tests through
 * `viewStoreContract(name, factory)`. View and projection names are unique per test.
 */
import { describe, expect, it } from 'vitest';
import { viewWriteContract } from './view-store-writes.contract.js';
import { docIds, seedTasks, sortedIds, uniqueView, useViewStore, type ViewStoreFactory } from './view-store.fixtures.js';

export type { ViewStoreFactory } from './view-store.fixtures.js';

export function viewStoreContract(name: string, factory: ViewStoreFactory): void {
  describe(`ViewStore contract: ${name}`, () => {
    const store = useViewStore(factory);

    describe('reads', () => {
      it('get returns a stored document with its position, and undefined for a missing id', async () => {
        const view = uniqueView();
        const tasks = await seedTasks(store(), view);
        expect(await store().get(view, 't3')).toEqual({ id: 't3', position: 3n, doc: tasks.t3 });
        expect(await store().get(view, 'nope')).toBeUndefined();
        expect(await store().get(uniqueView(), 't3')).toBeUndefined();
      });

      it('documents keep keys with dots, a leading $, and % as they were written; find matches a field whose name has a %', async () => {
        const view = uniqueView();
        // Price tables are keyed by model names such as `motion3.0-video`.
        const doc = { models: { 'motion3.0-video': { price: 1 }, $odd: [{ 'a.b': 2, '%2E': 3 }], 'x%25y': 4 }, 'rate%': 'high' };
        await store().commit('p-keys', [{ view, id: 'k', position: 1n, doc }], 1n);
        expect((await store().get(view, 'k'))?.doc).toEqual(doc);
        expect(docIds(await store().find(view, { 'rate%': 'high' }))).toEqual(['k']);
        await store().commit('p-keys', [{ view, id: 'k', position: 2n, doc: { ...doc, 'rate%': 'low' } }], 2n);
        expect((await store().get(view, 'k'))?.doc).toEqual({ ...doc, 'rate%': 'low' });
      });

      it('getMany returns the documents that exist and skips missing ids', async () => {
        const view = uniqueView();
        await seedTasks(store(), view);
        expect(sortedIds(await store().getMany(view, ['t4', 'missing', 't1']))).toEqual(['t1', 't4']);
        expect(await store().getMany(view, [])).toEqual([]);
      });

      it('find matches equality on every given field, top-level and nested dot paths', async () => {
        const view = uniqueView();
        await seedTasks(store(), view);
        expect(sortedIds(await store().find(view, { status: 'running' }))).toEqual(['t2', 't5']);
        expect(sortedIds(await store().find(view, { 'account.id': 'acc-a', final: false }))).toEqual(['t1', 't2']);
        expect(sortedIds(await store().find(view, { 'account.tier': 'gold', progress: 1 }))).toEqual(['t4']);
        expect(await store().find(view, { status: 'running', 'account.id': 'acc-c' })).toEqual([]);
      });

      it('find compares booleans, numbers and strings by JSON type', async () => {
        const view = uniqueView();
        await store().commit(
          `${view}-p`,
          [
            { view, id: 'bool', position: 1n, doc: { v: true } },
            { view, id: 'one', position: 2n, doc: { v: 1 } },
            { view, id: 'text', position: 3n, doc: { v: '1' } },
            { view, id: 'zero', position: 4n, doc: { v: 0 } },
            { view, id: 'false', position: 5n, doc: { v: false } },
          ],
          undefined,
        );
        expect(docIds(await store().find(view, { v: true }))).toEqual(['bool']);
        expect(docIds(await store().find(view, { v: 1 }))).toEqual(['one']);
        expect(docIds(await store().find(view, { v: '1' }))).toEqual(['text']);
        expect(docIds(await store().find(view, { v: false }))).toEqual(['false']);
        expect(docIds(await store().find(view, { v: 0 }))).toEqual(['zero']);
      });

      it('find with null matches an explicit null or a missing field', async () => {
        const view = uniqueView();
        await seedTasks(store(), view);
        expect(sortedIds(await store().find(view, { note: null }))).toEqual(['t1', 't2', 't3', 't4']);
        expect(sortedIds(await store().find(view, { 'account.tier': null }))).toEqual(['t2', 't3', 't5']);
      });

      it('find with no conditions returns every document of that view only', async () => {
        const [view, other] = [uniqueView(), uniqueView()];
        await seedTasks(store(), view);
        await seedTasks(store(), other);
        expect(sortedIds(await store().find(view, {}))).toEqual(['t1', 't2', 't3', 't4', 't5']);
      });

      it('find sorts by a field ascending or descending and pages with limit and offset', async () => {
        const view = uniqueView();
        await seedTasks(store(), view);
        expect(docIds(await store().find(view, {}, { sortBy: 'createdAt' }))).toEqual(['t2', 't4', 't1', 't5', 't3']);
        expect(docIds(await store().find(view, {}, { sortBy: 'createdAt', desc: true }))).toEqual(['t3', 't5', 't1', 't4', 't2']);
        expect(docIds(await store().find(view, {}, { sortBy: 'createdAt', limit: 2, offset: 1 }))).toEqual(['t4', 't1']);
        expect(docIds(await store().find(view, { 'account.id': 'acc-a' }, { sortBy: 'progress', desc: true, limit: 2 }))).toEqual(['t2', 't4']);
        expect(docIds(await store().find(view, {}, { sortBy: 'status', offset: 4 }))).toEqual(['t3']);
      });

      it('count counts the documents that match', async () => {
        const view = uniqueView();
        await seedTasks(store(), view);
        expect(await store().count(view, {})).toBe(5);
        expect(await store().count(view, { final: true })).toBe(2);
        expect(await store().count(view, { 'account.id': 'acc-b', status: 'running' })).toBe(1);
        expect(await store().count(uniqueView(), {})).toBe(0);
      });

      it('answers ping', async () => {
        await expect(store().ping()).resolves.toBeUndefined();
      });
    });

    viewWriteContract(store);
  });
}
