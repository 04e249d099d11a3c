/**
 * The health check's request to one channel: light, read-only, and through the same upstream
 * code as real traffic.
 *
 * - A family with a poll adapter (every async family) is asked for a task id no upstream has
 *   handed out: the request goes through the upstream's own API (its router, its key check,
 *   its task lookup), not only its front door, and costs it nothing. "Not found", or any other
 *   answer the adapter reads, means the channel answers.
 * - A channel of a family without one (the synchronous ones call no poll) gets a GET of its base
 *   URL: whatever the server answers below 500 shows it up.
 *
 * Judged like a real try: a retryable failure (5xx, 429, 408, no connection, no answer within
 * the check's time, an answer that cannot be read) is the channel's failure; a refusal (401,
 * 404, ...) is an answer, so the channel is up.
 */
import type { ChannelDoc } from '../../../projections/channels.js';
import { failureOf, upstreamJson } from './upstream-http.js';
import { upstreamModelOf, UpstreamError, type SubmittedTaskData, type UpstreamAdapter } from './upstream.js';
import { untilAborted } from '../tasks/deadline.js';

/** The upstream task id asked for: no upstream hands out this one. */
export const HEALTH_CHECK_TASK_ID = 'gateway-health-check';

/** Longest one channel's check may take. */
export const HEALTH_CHECK_TIMEOUT_MS = 10_000;

/** Resolves when the channel answered; throws a retryable UpstreamError when it did not. */
export async function probeChannel(
  channel: ChannelDoc,
  baseUrl: string,
  adapter: UpstreamAdapter | undefined,
  timeoutMs = HEALTH_CHECK_TIMEOUT_MS,
): Promise<void> {
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    await untilAborted(adapter ? pollMissingTask(channel, baseUrl, adapter, signal) : getBaseUrl(channel, baseUrl, signal), signal);
  } catch (err) {
    if (signal.aborted) throw new UpstreamError(`health check: no answer within ${timeoutMs} ms`, true);
    if (err instanceof UpstreamError) {
      if (err.retryable) throw new UpstreamError(`health check: ${err.message}`, true, err.status);
      return;
    }
    throw new UpstreamError(`health check: the upstream answer could not be read: ${err instanceof Error ? err.message : String(err)}`, true);
  }
}

async function pollMissingTask(channel: ChannelDoc, baseUrl: string, adapter: UpstreamAdapter, signal: AbortSignal): Promise<void> {
  const task = probeTask(channel);
  await adapter.poll({ channel, baseUrl, upstreamModel: upstreamModelOf(channel, task.model), task, upstreamTaskId: HEALTH_CHECK_TASK_ID, signal });
}

async function getBaseUrl(channel: ChannelDoc, baseUrl: string, signal: AbortSignal): Promise<void> {
  const reply = await upstreamJson('GET', baseUrl, { key: channel.key, signal, maxBytes: 1024 * 1024 });
  const failure = failureOf(reply, 'GET of the base URL');
  if (failure.retryable) throw failure;
}

/** What an adapter's poll reads of the task it follows: nothing of a real task is involved. */
function probeTask(channel: ChannelDoc): SubmittedTaskData {
  const model = channel.models[0] ?? '';
  return {
    taskId: HEALTH_CHECK_TASK_ID,
    family: channel.family,
    action: 'health-check',
    model,
    accountId: '',
    tokenId: '',
    group: '',
    channelCandidates: [channel.channelId],
    request: {},
    reservationId: '',
    reserved: 0,
    basis: { model, group: '', unit: 'request', unitPrice: 0, groupRatioPermille: 1000, units: 0 },
    createdAt: 0,
  };
}
