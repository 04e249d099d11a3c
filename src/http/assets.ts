/**
 * `GET /assets/<key>?exp=&sig=`: re-hosted result files at signed, expiring URLs, with HTTP
 * range support (video players seek). An expired URL answers 410, a missing file 404.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { AssetSigner } from '../engine/media/assets.js';
import type { GatewayDeps } from './deps.js';
import { GatewayError } from './errors.js';
import { sendAsset } from './send-asset.js';

export function assetRoutes(deps: GatewayDeps & { signer: AssetSigner }): FastifyPluginAsync {
  return async (app) => {
    app.get('/assets/*', { config: { errorShape: 'plain' }, schema: { hide: true } }, async (request, reply) => {
      const key = (request.params as { '*': string })['*'];
      const query = request.query as Record<string, string | undefined>;
      const exp = Number(query.exp);
      if (!query.sig || !Number.isSafeInteger(exp) || !deps.signer.verify(key, exp, query.sig)) {
        throw new GatewayError(403, 'invalid_signature', 'the asset URL is not valid');
      }
      if (exp * 1000 <= deps.clock().getTime()) throw new GatewayError(410, 'asset_expired', 'the asset URL has expired and the file was deleted');
      return sendAsset(request, reply, deps.assets, key, { 'cache-control': 'private, max-age=300' });
    });
  };
}
