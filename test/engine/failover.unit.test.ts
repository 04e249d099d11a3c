/** The channel fail-over loop shared by the dispatcher and synchronous calls (src/engine/channels/failover.ts). */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { ChannelDoc } from '../../projections/channels.js';
import { failover, failoverChannels, exhaustedReason, NO_CHANNEL_REASON, type FailoverOptions, type FailoverTry } from '../../src/engine/channels/failover.js';
import { UpstreamError } from '../../src/engine/channels/upstream.js';

const log = pino({ level: 'silent' });

function channel(channelId: string, over: Partial<ChannelDoc> = {}): ChannelDoc {
  return {
    channelId,
    name: channelId,
    family: 'images',
    baseUrl: 'https://upstream.example',
    key: 'k',
    models: ['m'],
    modelMapping: {},
    groups: ['default'],
    priority: 0,
    weight: 1,
    status: 1,
    createdAt: '2024-01-01T00:00:00Z',
    updatedAt: '2024-01-01T00:00:00Z',
    ...over,
  };
}

/** Runs the loop over `channels` where each channel's call does what `behaviour` says; returns what happened. */
async function run(channels: ChannelDoc[], behaviour: Record<string, () => Promise<string>>, extra: Partial<FailoverOptions<string>> = {}) {
  const calls: FailoverTry[] = [];
  const recorded: [string, number, boolean][] = [];
  const outcome = await failover<string>({
    channels,
    log,
    logFields: { taskId: 't1' },
    failedMessage: 'upstream call failed',
    call: (t) => {
      calls.push(t);
      return behaviour[t.channel.channelId]!();
    },
    recordFailure: async (t, err) => {
      recorded.push([t.channel.channelId, t.attempt, err.retryable]);
    },
    ...extra,
  });
  return { outcome, calls: calls.map((t) => `${t.channel.channelId}#${t.attempt}`), recorded };
}

const retryable = (why: string) => async (): Promise<string> => {
  throw new UpstreamError(why, true, 503);
};
const refused = (why: string) => async (): Promise<string> => {
  throw new UpstreamError(why, false, 400);
};
const answers = (value: string) => async () => value;

describe('failoverChannels', () => {
  const catalog = (docs: ChannelDoc[]) => ({ channel: (id: string) => docs.find((d) => d.channelId === id) });

  it('keeps the known, enabled, usable and untried candidates, higher priority first', () => {
    const docs = [
      channel('low', { priority: 1 }),
      channel('high', { priority: 9 }),
      channel('off', { status: 2, priority: 9 }),
      channel('video', { family: 'vidgen', priority: 9 }),
      channel('tried', { priority: 9 }),
    ];
    const ids = ['low', 'high', 'off', 'video', 'tried', 'deleted'];
    const order = failoverChannels(catalog(docs), ids, { exclude: new Set(['tried']), usable: (c) => c.family === 'images' });
    expect(order.map((c) => c.channelId)).toEqual(['high', 'low']);
    // Without a filter only the unknown and the disabled are left out.
    expect(
      failoverChannels(catalog(docs), ids)
        .map((c) => c.channelId)
        .sort(),
    ).toEqual(['high', 'low', 'tried', 'video']);
  });

  it('orders one priority by weight (the random source decides)', () => {
    const docs = [channel('a', { weight: 1 }), channel('b', { weight: 0 }), channel('c', { weight: 3 })];
    // key = u^(1/weight) with u fixed: the heavier channel has the higher key; weight 0 goes last.
    expect(failoverChannels(catalog(docs), ['a', 'b', 'c'], {}, () => 0.5).map((c) => c.channelId)).toEqual(['c', 'a', 'b']);
  });
});

describe('failover', () => {
  it('moves on after a retryable failure, recording it, and stops at the first answer', async () => {
    const { outcome, calls, recorded } = await run([channel('a'), channel('b'), channel('c')], {
      a: retryable('busy'),
      b: answers('up-1'),
      c: answers('never'),
    });
    expect(outcome).toMatchObject({ kind: 'succeeded', attempt: 2, value: 'up-1', channel: { channelId: 'b' } });
    expect(calls).toEqual(['a#1', 'b#2']);
    expect(recorded).toEqual([['a', 1, true]]);
  });

  it('numbers attempts on from the tries the task made before', async () => {
    const { outcome, calls } = await run([channel('a'), channel('b')], { a: retryable('busy'), b: answers('ok') }, { attemptsBefore: 3 });
    expect(calls).toEqual(['a#4', 'b#5']);
    expect(outcome).toMatchObject({ kind: 'succeeded', attempt: 5 });
  });

  it('stops at a refusal (not retryable), after recording it', async () => {
    const { outcome, calls, recorded } = await run([channel('a'), channel('b')], { a: refused('bad prompt'), b: answers('never') });
    expect(outcome.kind).toBe('refused');
    expect(outcome.kind === 'refused' && outcome.failure.message).toBe('bad prompt');
    expect(calls).toEqual(['a#1']);
    expect(recorded).toEqual([['a', 1, false]]);
  });

  it('is exhausted when every channel failed retryably (the last failure is the reason) or there was none', async () => {
    const { outcome, recorded } = await run([channel('a'), channel('b')], { a: retryable('first'), b: retryable('second') });
    expect(outcome.kind).toBe('exhausted');
    expect(outcome.kind === 'exhausted' && exhaustedReason(outcome.failure)).toBe('second');
    expect(recorded).toEqual([
      ['a', 1, true],
      ['b', 2, true],
    ]);
    const none = await run([], {});
    expect(none.outcome).toEqual({ kind: 'exhausted', failure: undefined });
    expect(exhaustedReason(undefined)).toBe(NO_CHANNEL_REASON);
  });

  it('hands back anything but an UpstreamError without recording or trying further', async () => {
    const bug = new TypeError('cannot read the answer');
    const { outcome, calls, recorded } = await run([channel('a'), channel('b')], { a: () => Promise.reject(bug), b: answers('never') });
    expect(outcome).toMatchObject({ kind: 'threw', error: bug, attempt: 1, channel: { channelId: 'a' } });
    expect(calls).toEqual(['a#1']);
    expect(recorded).toEqual([]);
  });

  it('asks beforeTry before each try, and stops when it says no', async () => {
    const asked: string[] = [];
    const { outcome, calls } = await run(
      [channel('a'), channel('b'), channel('c')],
      { a: retryable('busy'), b: answers('never'), c: answers('never') },
      {
        beforeTry: async (t) => {
          asked.push(`${t.channel.channelId}#${t.attempt}`);
          return t.channel.channelId === 'a';
        },
      },
    );
    expect(outcome).toEqual({ kind: 'stopped' });
    expect(asked).toEqual(['a#1', 'b#2']);
    expect(calls).toEqual(['a#1']);
  });

  it('lets failures of its own hooks through (a store that did not take the record)', async () => {
    const down = new Error('store down');
    await expect(
      run(
        [channel('a'), channel('b')],
        { a: retryable('busy'), b: answers('never') },
        {
          recordFailure: async () => {
            throw down;
          },
        },
      ),
    ).rejects.toBe(down);
  });
});
