/**
 * `GET /assets/<key>?exp=&sig=`: re-hosted result files at signed, expiring URLs, with HTTP
 * range support (video players seek). An expired URL answers 410, a missing file 404.
 */
import type { FastifyPluginAsync } from 'fastify';
import rangeParser from 'range-parser';
import type { AssetSigner } from '../engine/assets.js';
import type { GatewayDeps } from './deps.js';
import { GatewayError, useErrorShape } from './errors.js';

export function assetRoutes(deps: GatewayDeps & { signer: AssetSigner }): FastifyPluginAsync {
  return async (app) => {
    useErrorShape(app, 'plain');
    app.get('/assets/*', { schema: { hide: true } }, async (request, reply) => {
      const key = (request.params as { '*': string })['*'];
      const query = request.query as Record<string, string | undefined>;
      const exp = Number(query.exp);
      if (!query.sig || !Number.isSafeInteger(exp) || !deps.signer.verify(key, exp, query.sig)) {
        throw new GatewayError(403, 'invalid_signature', 'the asset URL is not valid');
      }
      if (exp * 1000 <= deps.clock().getTime()) throw new GatewayError(410, 'asset_expired', 'the asset URL has expired and the file was deleted');
      const stat = await deps.assets.stat(key).catch(() => undefined);
      if (!stat) throw new GatewayError(404, 'asset_not_found', 'the file no longer exists');
      reply.header('accept-ranges', 'bytes').header('content-type', stat.contentType).header('cache-control', 'private, max-age=300');
      const rangeHeader = request.headers.range;
      if (rangeHeader) {
        const ranges = rangeParser(stat.size, rangeHeader, { combine: true });
        if (ranges === -1) {
          return reply.status(416).header('content-range', `bytes */${stat.size}`).send();
        }
        if (ranges !== -2 && ranges.length === 1) {
          const { start, end } = ranges[0]!;
          const bytes = await deps.assets.getRange(key, start, end);
          if (!bytes) throw new GatewayError(404, 'asset_not_found', 'the file no longer exists');
          return reply.status(206).header('content-range', `bytes ${start}-${end}/${stat.size}`).header('content-length', bytes.length).send(bytes);
        }
      }
      const asset = await deps.assets.get(key);
      if (!asset) throw new GatewayError(404, 'asset_not_found', 'the file no longer exists');
      return reply.header('content-length', asset.bytes.length).send(asset.bytes);
    });
  };
}
