/** ViewStore contract, part 2: position-guarded writes, deletes, checkpoints and reset. */
import { describe, expect, it } from 'vitest';
import type { ViewStore } from '../../src/ports/view-store.js';
import { seedTasks, sortedIds, uniqueView, write } from './view-store.fixtures.js';

export function viewWriteContract(store: () => ViewStore): void {
  describe('position-guarded writes', () => {
    it('a write above the stored position replaces the document and its position', async () => {
      const view = uniqueView();
      await store().commit('p', [write(view, 'a', 10n, { v: 1 })], undefined);
      expect(await store().commit('p', [write(view, 'a', 11n, { v: 2 })], undefined)).toBe(1);
      expect(await store().get(view, 'a')).toEqual({ id: 'a', position: 11n, doc: { v: 2 } });
    });

    it('a view update at or below the stored position is ignored', async () => {
      const view = uniqueView();
      await store().commit('p', [write(view, 'a', 10n, { v: 'current' })], undefined);
      const applied = await store().commit('p', [write(view, 'a', 10n, { v: 'same' }), write(view, 'a', 3n, { v: 'old' })], undefined);

      expect(applied).toBe(0);
      expect(await store().get(view, 'a')).toEqual({ id: 'a', position: 10n, doc: { v: 'current' } });
    });

    it('writes to one document within one commit apply in order, each guarded', async () => {
      const view = uniqueView();
      const applied = await store().commit('p', [write(view, 'a', 5n, { v: 5 }), write(view, 'a', 7n, { v: 7 }), write(view, 'a', 6n, { v: 6 })], undefined);
      expect(applied).toBe(2);
      expect(await store().get(view, 'a')).toEqual({ id: 'a', position: 7n, doc: { v: 7 } });
    });

    it('a null doc above the stored position deletes the document', async () => {
      const view = uniqueView();
      await seedTasks(store(), view);
      expect(await store().commit('p', [write(view, 't2', 9n, null)], undefined)).toBe(1);

      expect(await store().get(view, 't2')).toBeUndefined();
      expect(sortedIds(await store().find(view, { status: 'running' }))).toEqual(['t5']);
      expect(await store().count(view, {})).toBe(4);
      expect(await store().getMany(view, ['t2'])).toEqual([]);
    });

    it('a delete at or below the stored position is ignored', async () => {
      const view = uniqueView();
      await seedTasks(store(), view);
      expect(await store().commit('p', [write(view, 't4', 4n, null), write(view, 't4', 2n, null)], undefined)).toBe(0);
      expect(await store().get(view, 't4')).toMatchObject({ position: 4n });
    });

    it('a replayed older write does not bring a deleted document back', async () => {
      const view = uniqueView();
      await store().commit('p', [write(view, 'a', 1n, { v: 1 }), write(view, 'a', 5n, null)], undefined);
      expect(await store().commit('p', [write(view, 'a', 3n, { v: 3 })], undefined)).toBe(0);
      expect(await store().get(view, 'a')).toBeUndefined();
      expect(await store().commit('p', [write(view, 'a', 6n, { v: 6 })], undefined)).toBe(1);
      expect(await store().get(view, 'a')).toEqual({ id: 'a', position: 6n, doc: { v: 6 } });
    });

    it('commitAll writes several projections at once, each write guarded, and moves every one of their checkpoints forward', async () => {
      const [a, b] = [uniqueView('a'), uniqueView('b')];
      const [pa, pb] = [uniqueView('pa'), uniqueView('pb')];
      const applied = await store().commitAll(
        [
          { projection: pa, writes: [write(a, 'x', 3n, { v: 1 })] },
          { projection: pb, writes: [write(b, 'y', 3n, { v: 2 }), write(b, 'y', 2n, { v: 0 })] },
        ],
        3n,
      );
      expect(applied).toBe(2);
      expect(await store().get(a, 'x')).toEqual({ id: 'x', position: 3n, doc: { v: 1 } });
      expect(await store().get(b, 'y')).toEqual({ id: 'y', position: 3n, doc: { v: 2 } });
      expect([await store().getCheckpoint(pa), await store().getCheckpoint(pb)]).toEqual([3n, 3n]);
      expect(await store().commitAll([{ projection: pa, writes: [] }], 2n)).toBe(0);
      expect(await store().getCheckpoint(pa)).toBe(3n);
    });

    it('one commit writes to several views', async () => {
      const [tasks, ledger] = [uniqueView('tasks'), uniqueView('ledger')];
      await store().commit('p', [write(tasks, 'x', 1n, { a: 1 }), write(ledger, 'x', 1n, { b: 2 })], 1n);
      expect((await store().get(tasks, 'x'))?.doc).toEqual({ a: 1 });
      expect((await store().get(ledger, 'x'))?.doc).toEqual({ b: 2 });
    });
  });

  describe('checkpoints', () => {
    it('a projection without a commit has no checkpoint', async () => {
      expect(await store().getCheckpoint(uniqueView('never'))).toBeUndefined();
    });

    it('commit applies the writes and moves the checkpoint together', async () => {
      const [view, projection] = [uniqueView(), uniqueView('projection')];
      expect(await store().commit(projection, [write(view, 'a', 42n, { v: 1 })], 42n)).toBe(1);
      expect(await store().getCheckpoint(projection)).toBe(42n);
      expect(await store().get(view, 'a')).toMatchObject({ position: 42n });
    });

    it('the checkpoint only moves forward (compare-and-set)', async () => {
      const projection = uniqueView('projection');
      await store().commit(projection, [], 10n);
      await store().commit(projection, [], 4n);
      expect(await store().getCheckpoint(projection)).toBe(10n);
      await store().commit(projection, [], 10n);
      expect(await store().getCheckpoint(projection)).toBe(10n);
      await store().commit(projection, [], 25n);
      expect(await store().getCheckpoint(projection)).toBe(25n);
    });

    it('a commit without a checkpoint leaves the checkpoint where it was', async () => {
      const [view, projection] = [uniqueView(), uniqueView('projection')];
      await store().commit(projection, [], 7n);
      await store().commit(projection, [write(view, 'a', 9n, { v: 1 })], undefined);
      expect(await store().getCheckpoint(projection)).toBe(7n);
    });

    it('stores large positions exactly', async () => {
      const [view, projection] = [uniqueView(), uniqueView('projection')];
      const big = 2n ** 62n + 7n;
      await store().commit(projection, [write(view, 'a', big, { v: 1 })], big);
      expect(await store().getCheckpoint(projection)).toBe(big);
      expect((await store().get(view, 'a'))?.position).toBe(big);
      expect(await store().commit(projection, [write(view, 'a', big - 1n, { v: 0 })], undefined)).toBe(0);
    });
  });

  describe('reset', () => {
    it('drops every document of the view and the projection checkpoint, nothing else', async () => {
      const [view, other] = [uniqueView(), uniqueView()];
      await seedTasks(store(), view);
      await seedTasks(store(), other);
      await store().reset(view, `${view}-projection`);

      expect(await store().find(view, {})).toEqual([]);
      expect(await store().getCheckpoint(`${view}-projection`)).toBeUndefined();
      expect(await store().count(other, {})).toBe(5);
      expect(await store().getCheckpoint(`${other}-projection`)).toBe(5n);
    });

    it('after a reset, a rebuild can write documents from the start again', async () => {
      const view = uniqueView();
      await seedTasks(store(), view);
      await store().reset(view, `${view}-projection`);
      expect(await store().commit(`${view}-projection`, [write(view, 't1', 1n, { rebuilt: true })], 1n)).toBe(1);
      expect(await store().get(view, 't1')).toEqual({ id: 't1', position: 1n, doc: { rebuilt: true } });
    });
  });
}
