/** A CSV answer (the text from src/lib/csv.ts): `text/csv`, as a download named `filename`. */
import type { FastifyReply } from 'fastify';

export function sendCsv(reply: FastifyReply, filename: string, body: string): FastifyReply {
  // Text with its own content type: sent as it is, not through the JSON answer's schema.
  return reply
    .type('text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${filename.replace(/[^A-Za-z0-9._-]/g, '_')}"`)
    .send(body);
}
