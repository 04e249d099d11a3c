import type { UserStatus } from '../src/domain/user.js';
import type { Projection } from './projection.js';
import { VIEWS } from './views.js';

export interface UserDoc {
  userId: string;
  username: string;
  /** Lowercased, for case-insensitive login lookups. */
  usernameKey: string;
  /** The current one (a reset or change replaces it). */
  passwordHash: string;
  role: 'admin' | 'user';
  group: string;
  accountId: string;
  createdAt: string;
  /** Absent on documents projected before administration existed: enabled. */
  status?: UserStatus;
  /** Why an administrator disabled the user, while disabled. */
  disabledReason?: string | null;
}

/** A user's status, for documents that predate it too. */
export const userStatusOf = (doc: Pick<UserDoc, 'status'>): UserStatus => doc.status ?? 'enabled';

export const usersProjection: Projection<UserDoc> = {
  name: 'users',
  view: VIEWS.users,
  handles: ['UserRegistered', 'UserDisabled', 'UserEnabled', 'UserDeleted', 'UserPasswordChanged', 'UserGroupChanged'],
  documentId: (e) => (e.type === 'UserRegistered' ? e.data.userId : e.streamName.slice('user-'.length)),
  evolve(doc, e) {
    if (e.type === 'UserRegistered') {
      if (doc) return undefined;
      const d = e.data;
      return { ...d, usernameKey: d.username.toLowerCase(), createdAt: e.metadata.at, status: 'enabled', disabledReason: null };
    }
    if (!doc || userStatusOf(doc) === 'deleted') return undefined;
    switch (e.type) {
      case 'UserDisabled':
        return { ...doc, status: 'disabled', disabledReason: e.data.reason };
      case 'UserEnabled':
        return { ...doc, status: 'enabled', disabledReason: null };
      case 'UserDeleted':
        return { ...doc, status: 'deleted', disabledReason: null };
      case 'UserPasswordChanged':
        return { ...doc, passwordHash: e.data.passwordHash };
      case 'UserGroupChanged':
        return { ...doc, group: e.data.group };
      default:
        return undefined;
    }
  },
};
