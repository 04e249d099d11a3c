/**
 * Sends a stored asset as the response: Content-Type and Content-Length from the store, and
 * single-range requests (video players seek) answered 206 with Content-Range, an unsatisfiable
 * range 416. Multiple ranges get the whole file (allowed by RFC 9110). The bytes are streamed
 * from the store as the client reads them (AssetStore.openRead): a chunk in memory at a time,
 * whatever the file's size. Shared by the signed asset URLs and the Vid-H3 content endpoint.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import rangeParser from 'range-parser';
import type { AssetStore } from '../ports/asset-store.js';
import { GatewayError } from './errors.js';

const gone = () => new GatewayError(404, 'asset_not_found', 'the file no longer exists');

/** `headers` (e.g. cache-control) are set only when the file exists, so error answers stay plain. */
export async function sendAsset(
  request: FastifyRequest,
  reply: FastifyReply,
  assets: AssetStore,
  key: string,
  headers: Readonly<Record<string, string>> = {},
): Promise<FastifyReply> {
  const stat = await assets.stat(key).catch(() => undefined);
  if (!stat) throw gone();
  reply.headers(headers).header('accept-ranges', 'bytes').header('content-type', stat.contentType);
  const rangeHeader = request.headers.range;
  if (rangeHeader) {
    const ranges = rangeParser(stat.size, rangeHeader, { combine: true });
    if (ranges === -1) {
      // A refusal like any other: the family's error body (the error handler drops content-type).
      reply.header('content-range', `bytes */${stat.size}`);
      throw new GatewayError(416, 'range_not_satisfiable', `Range: no byte of it is within the file (${stat.size} bytes)`, 'Range');
    }
    if (ranges !== -2 && ranges.length === 1) {
      const { start, end } = ranges[0]!;
      const part = await assets.openRead(key, { start, end });
      if (!part) throw gone();
      return reply
        .status(206)
        .header('content-range', `bytes ${start}-${end}/${part.size}`)
        .header('content-length', end - start + 1)
        .send(part.body);
    }
  }
  const asset = await assets.openRead(key);
  if (!asset) throw gone();
  return reply.header('content-length', asset.size).send(asset.body);
}
