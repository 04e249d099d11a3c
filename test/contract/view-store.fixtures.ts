/** Helpers shared by the ViewStore contract suites; view names are unique per test. */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach } from 'vitest';
import type { ViewDocument, ViewStore, ViewWrite } from '../../src/ports/view-store.js';

export type ViewStoreFactory = () => Promise<{ store: ViewStore; cleanup(): Promise<void> }>;

export function useViewStore(factory: ViewStoreFactory): () => ViewStore {
  let current: { store: ViewStore; cleanup(): Promise<void> } | undefined;
  beforeEach(async () => {
    current = await factory();
  });
  afterEach(async () => {
    await current?.cleanup();
    current = undefined;
  });
  return () => {
    if (!current) throw new Error('view store used outside a test');
    return current.store;
  };
}

export function uniqueView(label = 'view'): string {
  return `${label}-${randomUUID().slice(0, 8)}`;
}

export function write<T>(view: string, id: string, position: bigint, doc: T | null): ViewWrite<T> {
  return { view, id, position, doc };
}

export const docIds = (documents: readonly ViewDocument[]): string[] => documents.map((document) => document.id);

export const sortedIds = (documents: readonly ViewDocument[]): string[] => docIds(documents).sort();

export interface TaskDoc {
  status: string;
  progress: number;
  final: boolean;
  account: { id: string; tier?: string | null };
  createdAt: number;
  note?: string | null;
}

/** Five tasks of two accounts, committed at positions 1..5 in one projection batch. */
export async function seedTasks(store: ViewStore, view: string): Promise<Record<string, TaskDoc>> {
  const tasks: Record<string, TaskDoc> = {
    t1: { status: 'queued', progress: 0, final: false, account: { id: 'acc-a', tier: 'gold' }, createdAt: 30 },
    t2: { status: 'running', progress: 40, final: false, account: { id: 'acc-a' }, createdAt: 10, note: null },
    t3: { status: 'succeeded', progress: 100, final: true, account: { id: 'acc-b', tier: null }, createdAt: 50 },
    t4: { status: 'failed', progress: 1, final: true, account: { id: 'acc-a', tier: 'gold' }, createdAt: 20 },
    t5: { status: 'running', progress: 60, final: false, account: { id: 'acc-b' }, createdAt: 40, note: 'retry' },
  };
  const writes = Object.entries(tasks).map(([id, doc], index) => write(view, id, BigInt(index + 1), doc));
  await store.commit(`${view}-projection`, writes, 5n);
  return tasks;
}
