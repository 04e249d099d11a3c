import type { FastifyRequest } from 'fastify';
import type { EventMetadata } from '../ports/event-store.js';

/** Event metadata for a write made while serving a request. */
export function metadataFor(request: FastifyRequest, now: Date, extra: Partial<EventMetadata> = {}): EventMetadata {
  return { at: now.toISOString(), requestId: request.id, correlationId: request.id, ...extra };
}
