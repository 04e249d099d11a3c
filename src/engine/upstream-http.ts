/** JSON over HTTP to upstreams: timeouts, and the retryable/final split of failures. */
import { UpstreamError } from './upstream.js';

export interface UpstreamReply {
  status: number;
  body: unknown;
}

export async function upstreamJson(
  method: 'GET' | 'POST',
  url: string,
  options: { key: string; body?: unknown; timeoutMs?: number },
): Promise<UpstreamReply> {
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      headers: { authorization: `Bearer ${options.key}`, ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
      redirect: 'error',
    });
  } catch (err) {
    // Connection refused, reset, DNS failure or timeout: another channel may do better.
    throw new UpstreamError(`upstream unreachable: ${err instanceof Error ? err.message : String(err)}`, true);
  }
  const text = await res.text().catch(() => '');
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    /* keep the text */
  }
  return { status: res.status, body };
}

/** The message an upstream error body carries, in any of the spec's error shapes. */
export function upstreamMessage(body: unknown): string {
  if (typeof body === 'string') return body.slice(0, 500);
  if (body && typeof body === 'object') {
    const b = body as Record<string, unknown>;
    const err = b.error && typeof b.error === 'object' ? (b.error as Record<string, unknown>) : undefined;
    for (const m of [err?.message, b.message, b.description, b.fail_reason]) if (typeof m === 'string' && m) return m.slice(0, 500);
  }
  return 'no message';
}

/** 5xx and 429 are worth another channel; other 4xx are the request's own fault. */
export function failureOf(reply: UpstreamReply, what: string): UpstreamError {
  const retryable = reply.status >= 500 || reply.status === 429 || reply.status === 408;
  return new UpstreamError(`${what}: upstream answered ${reply.status}: ${upstreamMessage(reply.body)}`, retryable, reply.status);
}
