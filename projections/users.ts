import type { Projection } from './projection.js';
import { VIEWS } from './views.js';

export interface UserDoc {
  userId: string;
  username: string;
  /** Lowercased, for case-insensitive login lookups. */
  usernameKey: string;
  passwordHash: string;
  role: 'admin' | 'user';
  group: string;
  accountId: string;
  createdAt: string;
}

export const usersProjection: Projection<UserDoc> = {
  name: 'users',
  view: VIEWS.users,
  handles: ['UserRegistered'],
  documentId: (e) => (e.type === 'UserRegistered' ? e.data.userId : undefined),
  evolve(doc, e) {
    if (e.type !== 'UserRegistered' || doc) return undefined;
    const d = e.data;
    return { ...d, usernameKey: d.username.toLowerCase(), createdAt: e.metadata.at };
  },
};
