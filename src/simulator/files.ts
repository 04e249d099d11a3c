/**
 * `GET {prefix}/files/<id>/<name>`: result bytes. Each family that mints files says whether an id
 * and name are its own and servable now; no auth (these are the spec's temporary public URLs).
 */
import type { FastifyInstance } from 'fastify';
import type { SimContext, SimFamily } from './context.js';
import { notFound, plainErrorBody, useSimErrorShape, wildcardParam } from './http.js';

export function fileRoutes(app: FastifyInstance, ctx: SimContext, families: readonly SimFamily[]): void {
  useSimErrorShape(app, plainErrorBody);
  app.get<{ Params: { '*': string } }>('/files/*', async (request, reply) => {
    const [id = '', name = '', ...rest] = wildcardParam(request).split('/');
    if (rest.length > 0) throw notFound('file_not_found', 'no such file');
    for (const family of families) {
      const found = family.file?.(id, name, ctx);
      if (found) {
        return reply.header('content-type', found.contentType).header('cache-control', 'private, max-age=3600').send(found.body);
      }
    }
    throw notFound('file_not_found', 'no such file (unknown id, not finished yet, or expired)');
  });
}
