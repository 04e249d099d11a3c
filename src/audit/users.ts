/**
 * The users' audit: replays every user stream with the user aggregate's own fold and compares
 * what administration changed (status, group, password) with the projected users view. A
 * discrepancy names the user and the field; a password differs only as "not the replayed one"
 * (no hash is printed).
 */
import { foldUser, type UserState } from '../domain/user.js';
import { toDomainEvent } from '../domain/recorded.js';
import type { DomainEvent } from '../domain/events.js';
import type { EventStore } from '../ports/event-store.js';
import type { ViewStore } from '../ports/view-store.js';
import { userStatusOf, type UserDoc } from '../../projections/users.js';
import { VIEWS } from '../../projections/views.js';

export interface UserAudit {
  userId: string;
  differences: string[];
}

export interface UsersAuditReport {
  users: number;
  discrepancies: UserAudit[];
}

export async function auditUsers(events: EventStore, views: ViewStore): Promise<UsersAuditReport> {
  const streams = new Map<string, DomainEvent[]>();
  for await (const page of events.readStreamsWithPrefix('user-', { pageSize: 5000 })) {
    for (const raw of page) {
      const e = toDomainEvent(raw);
      if (!e) continue;
      const list = streams.get(raw.streamName);
      if (list) list.push(e);
      else streams.set(raw.streamName, [e]);
    }
  }
  const discrepancies: UserAudit[] = [];
  for (const [stream, recorded] of streams) {
    const userId = stream.slice('user-'.length);
    const differences = compare(foldUser(recorded), (await views.get<UserDoc>(VIEWS.users, userId))?.doc);
    if (differences.length > 0) discrepancies.push({ userId, differences });
  }
  return { users: streams.size, discrepancies };
}

function compare(replayed: UserState, view: UserDoc | undefined): string[] {
  const { profile } = replayed;
  if (!profile) return view ? ['in the view, but the stream holds no registration'] : [];
  if (!view) return ['registered, but missing from the view'];
  const differences: string[] = [];
  if (userStatusOf(view) !== replayed.status) differences.push(`status: view ${userStatusOf(view)}, replay ${replayed.status}`);
  if (view.group !== profile.group) differences.push(`group: view ${view.group}, replay ${profile.group}`);
  if (view.role !== profile.role) differences.push(`role: view ${view.role}, replay ${profile.role}`);
  if (view.passwordHash !== profile.passwordHash) differences.push('password: the view holds another than the replayed one');
  return differences;
}
