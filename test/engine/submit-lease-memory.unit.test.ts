import { describe, expect, it } from 'vitest';
import { createSubmitLeaseMemory } from '../../src/engine/dispatch/submit-lease-memory.js';

describe("an engine's memory of submit leases", () => {
  it('a claim may be taken over only once it was watched, the same epoch, for a whole lease', () => {
    const leases = createSubmitLeaseMemory({ leaseMs: 90_000 });
    expect(leases.watch('t', 1, 1_000)).toBe(90_000);
    expect(leases.watchedOut('t', 90_999)).toBeUndefined();
    // Seen again: the watch runs from the first sight, not the last.
    expect(leases.watch('t', 1, 50_000)).toBe(41_000);
    expect(leases.watchedOut('t', 91_000)).toBe(1);
    // Another epoch (the claim was replaced): the watch starts again.
    expect(leases.watch('t', 2, 91_000)).toBe(90_000);
    expect(leases.watchedOut('t', 91_000)).toBeUndefined();
    leases.unwatch('t');
    expect(leases.watchedOut('t', 1_000_000)).toBeUndefined();
  });

  it('holds an answer until released', () => {
    const leases = createSubmitLeaseMemory({ leaseMs: 90_000 });
    const answer = { epoch: 1, channelId: 'c', attempt: 1, upstreamTaskId: 'u' };
    leases.hold('t', answer);
    expect(leases.held('t')).toEqual(answer);
    leases.release('t');
    expect(leases.held('t')).toBeUndefined();
  });

  it('is bounded: the oldest entries go first (forgetting only delays a take-over or repeats a submit under its key)', () => {
    const leases = createSubmitLeaseMemory({ leaseMs: 10, maxEntries: 2 });
    for (const t of ['a', 'b', 'c']) {
      leases.hold(t, { epoch: 1, channelId: 'c', attempt: 1, upstreamTaskId: t });
      leases.watch(t, 1, 0);
    }
    expect(['a', 'b', 'c'].map((t) => leases.held(t)?.upstreamTaskId)).toEqual([undefined, 'b', 'c']);
    expect(['a', 'b', 'c'].map((t) => leases.watchedOut(t, 10))).toEqual([undefined, 1, 1]);
  });
});
