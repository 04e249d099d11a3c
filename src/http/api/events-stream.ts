/**
 * `GET /api/events/stream`: the downstream event stream as server-sent events — the same
 * envelopes the publisher puts on the bus. An administrator sees every account's events and what
 * happened to users (disabled, enabled, deleted, password and group changes), anyone else only
 * their own account's. Each event's SSE id is its global position, so a client
 * resumes with `Last-Event-ID`; without one the stream starts now (`?from=beginning` replays).
 * A starting point that is not a position of this stream is a 400 naming it, before the 200.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { toDomainEvent } from '../../domain/recorded.js';
import { envelopeOf, userAdminEnvelopeOf } from '../../engine/outbound/event-envelope.js';
import type { Subscription } from '../../ports/event-store.js';
import { keyOrSessionCaller } from '../auth/session.js';
import type { GatewayDeps } from '../deps.js';
import { GatewayError } from '../errors.js';
import { SseWriter } from '../sse.js';
import { API_ROUTE } from '../api-response.js';

/** Positions are signed 64-bit in every store (SQLite INTEGER; EventStoreDB log positions). */
const MAX_POSITION = 2n ** 63n - 1n;

export function eventStreamRoutes(deps: GatewayDeps): FastifyPluginAsync {
  /**
   * Where the stream starts (exclusive): `Last-Event-ID` (or `?after=`), a decimal position
   * no later than the store's head — a larger one was never an id of this stream, and resuming
   * from it would silently skip events; else `?from=beginning` (everything) or `now` (default).
   */
  async function startingPoint(request: FastifyRequest): Promise<bigint> {
    const query = request.query as Record<string, unknown>;
    // An empty Last-Event-ID means no id (what an EventSource has before its first event).
    const header = request.headers['last-event-id'];
    const hasHeader = header !== undefined && !(typeof header === 'string' && header.trim() === '');
    const [name, given] = hasHeader ? ['Last-Event-ID', header] : ['after', query.after];
    const head = await deps.events.headPosition();
    if (given !== undefined) {
      const text = typeof given === 'string' ? given.trim() : undefined;
      const position = text !== undefined && /^\d{1,19}$/.test(text) ? BigInt(text) : undefined;
      if (position === undefined || position > MAX_POSITION || position > head) {
        throw new GatewayError(400, 'invalid_request', `${name}: must be the id (a position) of an event from this stream, 0 to ${head}`, name);
      }
      return position;
    }
    const from = query.from;
    if (from === undefined || from === 'now') return head;
    if (from === 'beginning') return 0n;
    throw new GatewayError(400, 'invalid_request', 'from: must be beginning or now (resume with Last-Event-ID)', 'from');
  }

  return async (app) => {
    // A stream has no end of its own: closing the server ends the open ones (cleanly, so an
    // EventSource reconnects — to another instance — with its Last-Event-ID) instead of
    // waiting for their clients to leave.
    const open = new Set<Subscription>();
    app.addHook('preClose', async () => {
      await Promise.all([...open].map((subscription) => subscription.close()));
    });

    app.get(
      '/api/events/stream',
      { config: { ...API_ROUTE, eventStream: 'always' }, schema: { tags: ['events'], summary: 'Task and billing events as server-sent events' } },
      async (request, reply) => {
        // The account whose events the caller may see, or null for all (administrators).
        const caller = await keyOrSessionCaller(request, deps);
        const scope = caller.admin ? null : caller.accountId;
        // Everything is checked before the 200: once the stream is open an error cannot be told.
        const after = await startingPoint(request);

        const stream = new SseWriter(reply);
        stream.open();
        stream.comment('connected');
        const subscription = deps.events.subscribe({ after, streamPrefixes: ['task-', 'callback-', 'account-', ...(scope === null ? ['user-'] : [])] });
        stream.heartbeat();
        const stopListening = stream.onClose(() => void subscription.close());
        open.add(subscription);
        try {
          for await (const batch of subscription) {
            for (const recorded of batch) {
              const event = toDomainEvent(recorded);
              // Administrators also see what happened to users (never a password hash).
              const envelope = event && (envelopeOf(event) ?? (scope === null ? userAdminEnvelopeOf(event) : undefined));
              if (!envelope || (scope !== null && envelope.accountId !== scope)) continue;
              // A client slower than the store: wait for it rather than buffer the backlog in memory.
              if (!stream.send({ id: envelope.position, event: envelope.type, data: JSON.stringify(envelope) })) await stream.drained();
            }
          }
        } finally {
          open.delete(subscription);
          stopListening();
          stream.end();
        }
      },
    );
  };
}
