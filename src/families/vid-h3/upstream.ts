/**
 * The Vid-H3 upstream protocol: the spec's own 4.13 interface (OpenAI-style video objects). The
 * upstream serves the finished video only from its authenticated content endpoint, so the
 * adapter downloads it with the channel key and hands the bytes to the engine to re-host.
 */
import { failureOf, upstreamJson } from '../../engine/upstream-http.js';
import { UpstreamError, type UpstreamAdapter, type UpstreamStatus } from '../../engine/upstream.js';
import { isPlainObject, knownTier, reportedNumber, VIDEO_MAX_AGE_SECONDS, VIDEO_POLL_INTERVAL_MS, videoSucceeded } from '../video-common.js';
import { VID_H3_RESOLUTIONS } from './request.js';

const PATH = '/v1/videos';
const MAX_VIDEO_BYTES = 512 * 1024 * 1024;

async function downloadContent(url: string, key: string): Promise<Buffer> {
  let res: Response;
  try {
    res = await fetch(url, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(120_000), redirect: 'follow' });
  } catch (err) {
    throw new UpstreamError(`content: upstream unreachable: ${err instanceof Error ? err.message : String(err)}`, true);
  }
  if (!res.ok) throw new UpstreamError(`content: upstream answered ${res.status}`, true, res.status);
  const bytes = Buffer.from(await res.arrayBuffer());
  if (bytes.length === 0 || bytes.length > MAX_VIDEO_BYTES) throw new UpstreamError(`content: ${bytes.length} bytes is not a usable video`, true);
  return bytes;
}

export const vidH3Upstream: UpstreamAdapter = {
  family: 'vid-h3',
  delivery: () => 'url',
  pollIntervalMs: VIDEO_POLL_INTERVAL_MS,
  maxAgeSeconds: VIDEO_MAX_AGE_SECONDS,

  async submit({ baseUrl, channel, upstreamModel, task }) {
    const reply = await upstreamJson('POST', `${baseUrl}${PATH}`, { key: channel.key, body: { ...task.request, model: upstreamModel } });
    if (reply.status !== 200) throw failureOf(reply, 'submit');
    const id = isPlainObject(reply.body) ? reply.body.id : undefined;
    if (typeof id !== 'string' || !id) throw new UpstreamError('submit: upstream answered without a video id', true);
    return { upstreamTaskId: id };
  },

  async poll({ baseUrl, channel, upstreamTaskId, task }): Promise<UpstreamStatus> {
    const url = `${baseUrl}${PATH}/${encodeURIComponent(upstreamTaskId)}`;
    const reply = await upstreamJson('GET', url, { key: channel.key });
    if (reply.status === 404) return { state: 'lost', reason: 'the upstream no longer knows the video' };
    if (reply.status !== 200) throw failureOf(reply, 'poll');
    const video = isPlainObject(reply.body) ? reply.body : {};
    const snapshot = { status: video.status, progress: video.progress, seconds: video.seconds, size: video.size };
    const progress = reportedNumber(video.progress) ?? 0;
    switch (video.status) {
      case 'queued':
      case 'in_progress':
        return { state: video.status, progress, snapshot };
      case 'completed': {
        const bytes = await downloadContent(`${url}/content`, channel.key);
        const delivered = { seconds: reportedNumber(video.seconds), tier: knownTier(video.size, VID_H3_RESOLUTIONS) };
        return videoSucceeded({ b64: bytes.toString('base64') }, delivered, task.basis.units, snapshot);
      }
      case 'failed': {
        const error = isPlainObject(video.error) ? video.error : {};
        return { state: 'failed', code: String(error.code ?? 'upstream_failed'), reason: String(error.message ?? 'the upstream video failed'), snapshot };
      }
      default:
        throw new UpstreamError(`poll: unknown upstream status ${String(video.status)}`, true);
    }
  },
};
