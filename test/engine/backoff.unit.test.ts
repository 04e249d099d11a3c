/** The shared delay schedule and retry loop (src/lib/backoff.ts): each place's bounds, exactly. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { backoffDelay, jittered, retry } from '../../src/lib/backoff.js';

const schedule = (b: Parameters<typeof backoffDelay>[0], tries: number, random?: () => number) =>
  Array.from({ length: tries }, (_, attempt) => backoffDelay(b, attempt, random));

describe('backoffDelay', () => {
  it('doubles from the first delay and stops at the ceiling', () => {
    expect(schedule({ initialMs: 100, maxMs: 10_000 }, 9)).toEqual([100, 200, 400, 800, 1600, 3200, 6400, 10_000, 10_000]);
    expect(schedule({ initialMs: 200 }, 5)).toEqual([200, 400, 800, 1600, 3200]);
  });

  it('counts doublings up to maxDoublings, and stays finite (and a number) for long outages', () => {
    expect(schedule({ initialMs: 1, maxDoublings: 3 }, 6)).toEqual([1, 2, 4, 8, 8, 8]);
    expect(backoffDelay({ initialMs: 500, maxMs: 30_000, maxDoublings: 10 }, 5000)).toBe(30_000);
    expect(backoffDelay({ initialMs: 0, maxMs: 100, maxDoublings: 20 }, 5000)).toBe(0);
  });

  it('full jitter spreads over [0, delay), equal jitter over [delay/2, delay), the cap applies first', () => {
    expect(backoffDelay({ initialMs: 2, maxMs: 100, jitter: 'full' }, 10, () => 0.5)).toBe(50);
    expect(backoffDelay({ initialMs: 2, maxMs: 100, jitter: 'full' }, 10, () => 0)).toBe(0);
    expect(backoffDelay({ initialMs: 2000, maxMs: 60_000, jitter: 'equal' }, 1, () => 0)).toBe(2000);
    expect(backoffDelay({ initialMs: 2000, maxMs: 60_000, jitter: 'equal' }, 1, () => 0.5)).toBe(3000);
    expect(backoffDelay({ initialMs: 2000, maxMs: 60_000, jitter: 'equal' }, 10, () => 0.999_999)).toBeLessThan(60_000);
  });

  it('uses Math.random unless told otherwise', () => {
    const random = vi.spyOn(Math, 'random').mockReturnValue(0.25);
    try {
      expect(backoffDelay({ initialMs: 100, jitter: 'full' }, 0)).toBe(25);
    } finally {
      random.mockRestore();
    }
  });
});

describe('jittered', () => {
  it('spread: within ±spread of the delay', () => {
    expect(jittered(1000, { spread: 0.1 }, () => 0)).toBeCloseTo(900);
    expect(jittered(1000, { spread: 0.1 }, () => 0.5)).toBeCloseTo(1000);
    expect(jittered(1000, { spread: 0.1 }, () => 0.999_999)).toBeCloseTo(1100, 1);
    expect(jittered(1000, 'none', () => 0.3)).toBe(1000);
  });
});

describe('retry', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('tries again after the scheduled waits until the work resolves, telling each failure first', async () => {
    vi.useFakeTimers();
    const failures: [string, number, number][] = [];
    let calls = 0;
    const done = retry(
      async (attempt) => {
        calls++;
        if (attempt < 3) throw new Error(`try ${attempt}`);
        return 'ok';
      },
      { backoff: { initialMs: 100, maxMs: 250 }, onRetry: (err, attempt, delayMs) => failures.push([(err as Error).message, attempt, delayMs]) },
    );
    await vi.advanceTimersByTimeAsync(99);
    expect(calls).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toBe(2);
    await vi.advanceTimersByTimeAsync(200 + 250);
    await expect(done).resolves.toBe('ok');
    expect(calls).toBe(4);
    expect(failures).toEqual([
      ['try 0', 0, 100],
      ['try 1', 1, 200],
      ['try 2', 2, 250],
    ]);
  });

  it('throws the failure as soon as retryIf says no, without waiting', async () => {
    let calls = 0;
    const boom = new Error('boom');
    const onRetry = vi.fn();
    await expect(
      retry(
        async () => {
          calls++;
          throw boom;
        },
        { backoff: { initialMs: 1 }, retryIf: (_err, attempt) => attempt < 2, onRetry },
      ),
    ).rejects.toBe(boom);
    expect(calls).toBe(3);
    expect(onRetry).toHaveBeenCalledTimes(2);
  });

  it('work may give up quietly on a later try by resolving', async () => {
    let stopping = false;
    const result = await retry(
      async (attempt) => {
        if (attempt > 0 && stopping) return 'gave up';
        stopping = true;
        throw new Error('store down');
      },
      { backoff: { initialMs: 1 } },
    );
    expect(result).toBe('gave up');
  });

  it('an abort ends a wait at once: the promise rejects with the reason and no further try starts', async () => {
    const stop = new AbortController();
    let calls = 0;
    const started = Date.now();
    const done = retry(
      async () => {
        calls++;
        throw new Error('down');
      },
      { backoff: { initialMs: 10_000 }, signal: stop.signal },
    );
    await new Promise((r) => setTimeout(r, 20));
    stop.abort(new Error('stopping'));
    await expect(done).rejects.toThrow('stopping');
    expect(Date.now() - started).toBeLessThan(1000);
    await new Promise((r) => setTimeout(r, 50));
    expect(calls).toBe(1);
  });
});
