/**
 * A polled task's answer is signed once per stored document (engine/tasks/task-view.ts): the same
 * cached document answers with the same frozen object, and a commit, another public base or
 * another account never gets an old answer.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSqliteEventStore } from '../../src/adapters/sqlite/event-store.js';
import { createSqliteViewStore } from '../../src/adapters/sqlite/view-store.js';
import { assetRef } from '../../src/domain/asset-ref.js';
import { createAssetSigner } from '../../src/engine/media/assets.js';
import { taskViewFor } from '../../src/engine/tasks/task-view.js';
import type { EventStore } from '../../src/ports/event-store.js';
import type { ViewStore } from '../../src/ports/view-store.js';
import type { Projection } from '../../projections/projection.js';
import { withViewCache, type CachedViewStore } from '../../projections/view-cache.js';
import { tempDir } from '../support/tmp.js';

interface Doc {
  accountId: string;
  status: string;
  urls: string[];
}

const projection: Projection<Doc> = { name: 'tasks', view: 'tasks', handles: [], documentId: () => undefined, evolve: () => undefined };
const EXP = 4_000_000_000;

let dir: ReturnType<typeof tempDir>;
let store: ViewStore;
let views: CachedViewStore;
let events: EventStore;
let base = 'https://api-1.example';
const signer = createAssetSigner('secret', () => base);

beforeEach(() => {
  dir = tempDir();
  store = createSqliteViewStore({ path: `${dir.path}/views.sqlite` });
  views = withViewCache(store, ['tasks']);
  events = createSqliteEventStore({ path: `${dir.path}/events.sqlite` });
  base = 'https://api-1.example';
});
afterEach(async () => {
  await events.close();
  await store.close();
  dir.remove();
});

const doc = (status: string): Doc => ({ accountId: 'acct-1', status, urls: [assetRef('tasks/t1/0.png', EXP), 'https://elsewhere.example/x.png'] });

describe('signed task views', () => {
  it('a cached document polled again answers with the same frozen, signed object', async () => {
    await views.commit('tasks', [{ view: 'tasks', id: 't1', position: 1n, doc: doc('running') }], 1n);
    const first = await taskViewFor({ views, events, signer }, projection, 't1', 'acct-1');
    const second = await taskViewFor({ views, events, signer }, projection, 't1', 'acct-1');
    expect(first!.urls[0]).toBe(signer.url('tasks/t1/0.png', EXP));
    expect(first!.urls[1]).toBe('https://elsewhere.example/x.png');
    expect(second).toBe(first);
    expect(Object.isFrozen(first) && Object.isFrozen(first!.urls)).toBe(true);
    // The cached document itself still holds the reference, not a URL.
    expect((await views.get<Doc>('tasks', 't1'))!.doc.urls[0]).toBe(assetRef('tasks/t1/0.png', EXP));
  });

  it('a commit, another public base and another account each get their own answer', async () => {
    await views.commit('tasks', [{ view: 'tasks', id: 't1', position: 1n, doc: doc('running') }], 1n);
    const running = await taskViewFor({ views, events, signer }, projection, 't1', 'acct-1');
    await views.commit('tasks', [{ view: 'tasks', id: 't1', position: 2n, doc: doc('succeeded') }], 2n);
    const succeeded = await taskViewFor({ views, events, signer }, projection, 't1', 'acct-1');
    expect(running!.status).toBe('running');
    expect(succeeded!.status).toBe('succeeded');
    base = 'https://api-2.example';
    const moved = await taskViewFor({ views, events, signer }, projection, 't1', 'acct-1');
    expect(moved!.urls[0]).toBe(signer.url('tasks/t1/0.png', EXP));
    expect(moved!.urls[0]).toMatch(/^https:\/\/api-2\.example\/assets\//);
    expect(await taskViewFor({ views, events, signer }, projection, 't1', 'acct-2')).toBeUndefined();
  });
});
