/**
 * An async images upstream (spec 4.9/4.10) that records the Authorization header of every
 * request it gets, so a test sees exactly which channel key the gateway sent: the flaky upstream
 * of the reliability suite, never taken down. Tasks complete at once with an inline image.
 */
import { startFlakyUpstream } from '../reliability/flaky-upstream.js';

export interface KeyRecordingUpstream {
  url: string;
  /** `<method> <path> <authorization header>` of every request, in arrival order. */
  readonly requests: string[];
  /** The bearer keys of the submits (POSTs), in arrival order. */
  submittedKeys(): string[];
  close(): Promise<void>;
}

export async function startKeyRecordingUpstream(): Promise<KeyRecordingUpstream> {
  const upstream = await startFlakyUpstream();
  return {
    url: upstream.url,
    requests: upstream.requests,
    submittedKeys: () =>
      upstream.requests.filter((r) => r.startsWith('POST /v1/images/async/generations ')).map((r) => r.slice(r.lastIndexOf(' ') + 1).replace(/^Bearer /, '')),
    close: () => upstream.close(),
  };
}
