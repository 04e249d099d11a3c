/**
 * The real adapters (the built-in simulator's protocols), with their submit and/or poll wrapped
 * by a test: to count calls, hold answers back or slow them down. What `wrap` leaves out calls
 * the adapter as it is.
 */
import { upstreamAdapters } from '../../src/families/index.js';
import type { UpstreamAdapter } from '../../src/engine/channels/upstream.js';

export function wrappedUpstreams(wrap: (adapter: UpstreamAdapter) => Partial<Pick<UpstreamAdapter, 'submit' | 'poll'>>): Map<string, UpstreamAdapter> {
  return new Map(
    upstreamAdapters.map((a) => [
      a.family,
      { ...a, delivery: a.delivery, submit: (ctx) => a.submit(ctx), poll: (ctx) => a.poll(ctx), ...wrap(a) } satisfies UpstreamAdapter,
    ]),
  );
}
