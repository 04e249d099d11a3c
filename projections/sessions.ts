import type { Projection } from './projection.js';
import { VIEWS } from './views.js';

export interface SessionDoc {
  userId: string;
  /** Unix seconds. */
  expiresAt: number;
  /** When the session started (ISO); absent on documents projected before it was kept. */
  startedAt?: string;
}

/** Login sessions by the SHA-256 of the cookie value; ended sessions are deleted. */
export const sessionsProjection: Projection<SessionDoc> = {
  name: 'sessions',
  view: VIEWS.sessions,
  handles: ['UserSessionStarted', 'UserSessionEnded'],
  documentId: (e) => (e.type === 'UserSessionStarted' || e.type === 'UserSessionEnded' ? e.data.sessionHash : undefined),
  evolve(_doc, e) {
    if (e.type === 'UserSessionStarted') return { userId: e.streamName.slice('user-'.length), expiresAt: e.data.expiresAt, startedAt: e.metadata.at };
    if (e.type === 'UserSessionEnded') return null;
    return undefined;
  },
};
