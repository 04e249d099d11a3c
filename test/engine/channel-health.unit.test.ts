/** Circuit breakers per channel (src/engine/channels/channel-health.ts) and their wiring into the fail-over loop (src/engine/channels/failover.ts). */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { ChannelDoc } from '../../projections/channels.js';
import { ChannelUnavailableError, createChannelHealth, type ChannelHealth } from '../../src/engine/channels/channel-health.js';
import { TaskDeadlineError } from '../../src/engine/tasks/deadline.js';
import { CHANNELS_UNAVAILABLE_REASON, ChannelsUnavailableError, exhaustedReason, failover, type FailoverOptions } from '../../src/engine/channels/failover.js';
import { UpstreamError } from '../../src/engine/channels/upstream.js';

const log = pino({ level: 'silent' });
const HALF_OPEN_MS = 100;
const NOW = new Date('2030-01-01T00:00:00Z');

const health = (failures = 3): ChannelHealth => createChannelHealth({ failures, halfOpenAfterMs: HALF_OPEN_MS, log, clock: () => NOW });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const down = (why = 'upstream answered 503: busy') => Promise.reject(new UpstreamError(why, true, 503));
const refused = () => Promise.reject(new UpstreamError('upstream answered 400: bad prompt', false, 400));
const fine = () => Promise.resolve('ok');

/** Runs `work` on the channel, swallowing its failure; returns whether it was called. */
async function attempt(h: ChannelHealth, id: string, work: () => Promise<unknown>): Promise<boolean> {
  let called = false;
  await h
    .run(id, () => {
      called = true;
      return work();
    })
    .catch(() => undefined);
  return called;
}

async function open(h: ChannelHealth, id: string, failures = 3): Promise<void> {
  for (let i = 0; i < failures; i++) await attempt(h, id, () => down());
  expect(h.of(id).state).toBe('open');
}

describe('channel health: the breaker', () => {
  it('opens after N consecutive retryable failures; an open channel is neither admitted nor called', async () => {
    const h = health(3);
    expect(h.of('a')).toEqual({
      channelId: 'a',
      state: 'closed',
      consecutiveFailures: 0,
      lastFailureAt: undefined,
      lastError: undefined,
      lastCheckAt: undefined,
    });
    await attempt(h, 'a', () => down());
    await attempt(h, 'a', () => down());
    expect(h.of('a')).toMatchObject({ state: 'closed', consecutiveFailures: 2 });
    expect(h.admits('a')).toBe(true);
    await attempt(h, 'a', () => down('upstream answered 502: bad gateway'));
    expect(h.of('a')).toMatchObject({ state: 'open', consecutiveFailures: 3, lastError: 'upstream answered 502: bad gateway', lastFailureAt: NOW });
    expect(h.admits('a')).toBe(false);
    let called = false;
    await expect(
      h.run('a', async () => {
        called = true;
      }),
    ).rejects.toBeInstanceOf(ChannelUnavailableError);
    expect(called).toBe(false);
    // Another channel is judged on its own.
    expect(h.admits('b')).toBe(true);
    expect(h.snapshot().map((s) => s.channelId)).toEqual(['a']);
  });

  it('a refusal of the request (not retryable) does not count; a success resets the count', async () => {
    const h = health(3);
    await attempt(h, 'a', () => down());
    await attempt(h, 'a', () => down());
    for (let i = 0; i < 5; i++) await attempt(h, 'a', refused);
    expect(h.of('a')).toMatchObject({ state: 'closed', consecutiveFailures: 2 });
    await attempt(h, 'a', fine);
    expect(h.of('a')).toMatchObject({ state: 'closed', consecutiveFailures: 0 });
    await attempt(h, 'a', () => down());
    await attempt(h, 'a', () => down());
    expect(h.of('a').state).toBe('closed');
  });

  it('a call cut off by the task deadline is no verdict while closed', async () => {
    const h = health(2);
    for (let i = 0; i < 4; i++) await attempt(h, 'a', () => Promise.reject(new TaskDeadlineError(5)));
    expect(h.of('a')).toMatchObject({ state: 'closed', consecutiveFailures: 0 });
  });

  it('after the open period one trial goes through (others skip the channel meanwhile); its success closes the circuit', async () => {
    const h = health(3);
    await open(h, 'a');
    await sleep(HALF_OPEN_MS + 20);
    expect(h.admits('a')).toBe(true);
    let release!: () => void;
    const trial = h.run('a', () => new Promise<string>((resolve) => (release = () => resolve('recovered'))));
    expect(h.of('a').state).toBe('half_open');
    expect(h.admits('a')).toBe(false);
    // A try that meets the trial under way is refused at once, not made to wait for it.
    expect(await attempt(h, 'a', fine)).toBe(false);
    release();
    await expect(trial).resolves.toBe('recovered');
    expect(h.of('a')).toMatchObject({ state: 'closed', consecutiveFailures: 0 });
    expect(await attempt(h, 'a', fine)).toBe(true);
  });

  it('a failed trial opens the circuit again for another period; so does a trial cut off by the task deadline', async () => {
    const h = health(3);
    await open(h, 'a');
    await sleep(HALF_OPEN_MS + 20);
    expect(await attempt(h, 'a', () => down('still down'))).toBe(true);
    expect(h.of('a')).toMatchObject({ state: 'open', consecutiveFailures: 4, lastError: 'still down' });
    expect(h.admits('a')).toBe(false);
    await sleep(HALF_OPEN_MS + 20);
    expect(await attempt(h, 'a', () => Promise.reject(new TaskDeadlineError(5)))).toBe(true);
    expect(h.of('a')).toMatchObject({ state: 'open', consecutiveFailures: 5, lastError: 'no result within 5 s' });
  });

  it('a health check runs through the same breaker: it counts, it can be the trial, and it leaves an open channel alone', async () => {
    const h = health(2);
    expect(await h.check('a', () => down())).toBe('failed');
    expect(h.of('a').lastCheckAt).toEqual(NOW);
    expect(await h.check('a', () => down())).toBe('failed');
    expect(h.of('a').state).toBe('open');
    let probed = false;
    expect(
      await h.check('a', async () => {
        probed = true;
      }),
    ).toBe('skipped');
    expect(probed).toBe(false);
    await sleep(HALF_OPEN_MS + 20);
    expect(await h.check('a', async () => undefined)).toBe('passed');
    expect(h.of('a')).toMatchObject({ state: 'closed', consecutiveFailures: 0 });
    // A refusal is an answer: the channel is up.
    expect(await h.check('a', refused)).toBe('passed');
  });

  it('forgets channels that no longer exist', async () => {
    const h = health(1);
    await attempt(h, 'gone', () => down());
    await attempt(h, 'kept', () => down());
    h.retain((id) => id === 'kept');
    expect(h.snapshot().map((s) => s.channelId)).toEqual(['kept']);
    expect(h.of('gone').state).toBe('closed');
  });
});

function channel(channelId: string): ChannelDoc {
  return {
    channelId,
    name: channelId,
    family: 'images',
    baseUrl: 'https://upstream.example',
    key: 'k',
    models: ['m'],
    modelMapping: {},
    groups: [],
    priority: 0,
    weight: 1,
    status: 1,
    createdAt: '2024-01-01T00:00:00Z',
    updatedAt: '2024-01-01T00:00:00Z',
  };
}

/** The fail-over loop over `ids` with `h`, each channel's call doing what `behaviour` says. */
async function loop(h: ChannelHealth, ids: string[], behaviour: Record<string, () => Promise<string>>, extra: Partial<FailoverOptions<string>> = {}) {
  const calls: string[] = [];
  const asked: string[] = [];
  const recorded: string[] = [];
  const outcome = await failover<string>({
    channels: ids.map(channel),
    log,
    logFields: {},
    failedMessage: 'failed',
    health: h,
    beforeTry: async (t) => {
      asked.push(`${t.channel.channelId}#${t.attempt}`);
      return true;
    },
    call: (t) => {
      calls.push(`${t.channel.channelId}#${t.attempt}`);
      return behaviour[t.channel.channelId]!();
    },
    recordFailure: async (t, err) => {
      recorded.push(`${t.channel.channelId}#${t.attempt}: ${err.message}`);
    },
    ...extra,
  });
  return { outcome, calls, asked, recorded };
}

describe('channel health in the fail-over loop', () => {
  it('feeds the breaker with each try: a channel failing N times opens, then is skipped before anything else', async () => {
    const h = health(2);
    for (let i = 0; i < 2; i++) {
      const { outcome, calls } = await loop(h, ['a', 'b'], { a: () => down(), b: fine });
      expect(outcome).toMatchObject({ kind: 'succeeded', channel: { channelId: 'b' }, attempt: 2 });
      expect(calls).toEqual(['a#1', 'b#2']);
    }
    expect(h.of('a').state).toBe('open');
    const { outcome, calls, asked, recorded } = await loop(h, ['a', 'b'], { a: fine, b: fine });
    // Not called, not asked (no submit lease), no attempt number, nothing recorded.
    expect(outcome).toMatchObject({ kind: 'succeeded', channel: { channelId: 'b' }, attempt: 1 });
    expect(calls).toEqual(['b#1']);
    expect(asked).toEqual(['b#1']);
    expect(recorded).toEqual([]);
  });

  it('a refusal stops the loop as before and does not count against the channel', async () => {
    const h = health(1);
    const { outcome } = await loop(h, ['a', 'b'], { a: refused, b: fine });
    expect(outcome.kind).toBe('refused');
    expect(h.of('a').state).toBe('closed');
  });

  it('when every channel is open the loop is exhausted without calling any, with the circuit as the reason', async () => {
    const h = health(1);
    await loop(h, ['a', 'b'], { a: () => down(), b: () => down() });
    expect([h.of('a').state, h.of('b').state]).toEqual(['open', 'open']);
    const { outcome, calls, recorded } = await loop(h, ['a', 'b'], { a: fine, b: fine });
    expect(calls).toEqual([]);
    expect(recorded).toEqual([]);
    expect(outcome.kind).toBe('exhausted');
    const failure = outcome.kind === 'exhausted' ? outcome.failure : undefined;
    expect(failure).toBeInstanceOf(ChannelsUnavailableError);
    expect(exhaustedReason(failure)).toBe(CHANNELS_UNAVAILABLE_REASON);
  });

  it('a try the breaker refuses after its lease (a trial started meanwhile) is recorded as a retryable failure and the loop moves on', async () => {
    const h = health(1);
    await loop(h, ['a'], { a: () => down() });
    await sleep(HALF_OPEN_MS + 20);
    let release!: () => void;
    const trial = h.run('a', () => new Promise<string>((resolve) => (release = () => resolve('trial'))));
    // Admitted before the trial began, refused when the call starts.
    const admitted = new Set<string>();
    const racing: ChannelHealth = { ...h, admits: (id) => (admitted.add(id), true) };
    const { outcome, calls, recorded } = await loop(racing, ['a', 'b'], { a: fine, b: fine });
    expect(admitted.has('a')).toBe(true);
    expect(calls).toEqual(['b#2']);
    expect(recorded).toEqual(['a#1: channel a is unavailable: its circuit is open after repeated upstream failures']);
    expect(outcome).toMatchObject({ kind: 'succeeded', channel: { channelId: 'b' } });
    release();
    await trial;
  });
});
