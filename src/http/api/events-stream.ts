/**
 * `GET /api/events/stream`: the downstream event stream as server-sent events — the same
 * envelopes the publisher puts on the bus. An administrator sees every account's events, anyone
 * else only their own account's. Each event's SSE id is its global position, so a client
 * resumes with `Last-Event-ID`; without one the stream starts now (`?from=beginning` replays).
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { toDomainEvent } from '../../domain/recorded.js';
import { envelopeOf } from '../../engine/event-envelope.js';
import { authenticate, bearerKey } from '../auth/bearer.js';
import { sessionUserOf } from '../auth/session.js';
import type { GatewayDeps } from '../deps.js';
import { GatewayError } from '../errors.js';

export function eventStreamRoutes(deps: GatewayDeps): FastifyPluginAsync {
  /** The account whose events the caller may see, or null for all (administrators). */
  async function scopeOf(request: FastifyRequest): Promise<string | null> {
    if (bearerKey(request)) return (await authenticate(request, deps.tokens, deps.clock())).accountId;
    const user = await sessionUserOf(request, deps);
    if (!user) throw new GatewayError(401, 'unauthorized', 'login required: a session cookie or a Bearer API key');
    return user.role === 'admin' ? null : user.accountId;
  }

  return async (app) => {
    app.get('/api/events/stream', { schema: { tags: ['events'], summary: 'Task and billing events as server-sent events' } }, async (request, reply) => {
      const scope = await scopeOf(request);
      const query = request.query as Record<string, string | undefined>;
      const lastId = request.headers['last-event-id'];
      const resumeFrom = typeof lastId === 'string' ? lastId : query.after;
      if (resumeFrom !== undefined && !/^\d{1,20}$/.test(resumeFrom)) {
        throw new GatewayError(400, 'invalid_request', 'Last-Event-ID: must be the id (a position) of an event from this stream', 'Last-Event-ID');
      }
      const after = resumeFrom !== undefined ? BigInt(resumeFrom) : query.from === 'beginning' ? 0n : await deps.events.headPosition();

      reply.hijack();
      const raw = reply.raw;
      raw.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
      raw.write(': connected\n\n');
      const subscription = deps.events.subscribe({ after, streamPrefixes: ['task-', 'callback-', 'account-'] });
      const heartbeat = setInterval(() => raw.write(': keep-alive\n\n'), 15_000);
      const stop = () => void subscription.close();
      request.raw.on('close', stop);
      try {
        for await (const batch of subscription) {
          for (const recorded of batch) {
            const event = toDomainEvent(recorded);
            const envelope = event && envelopeOf(event);
            if (!envelope || (scope !== null && envelope.accountId !== scope)) continue;
            raw.write(`id: ${envelope.position}\nevent: ${envelope.type}\ndata: ${JSON.stringify(envelope)}\n\n`);
          }
        }
      } finally {
        clearInterval(heartbeat);
        request.raw.off('close', stop);
        raw.end();
      }
    });
  };
}
