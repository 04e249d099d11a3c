import { describe, expect, it } from 'vitest';
import { fold } from '../../src/domain/decider.js';
import type { ChannelSettings } from '../../src/domain/events.js';
import {
  decideChannel,
  evolveChannel,
  channelDecider,
  initialChannelState,
  type ChannelCommand,
  type ChannelEvent,
  type ChannelState,
} from '../../src/domain/channel.js';
import { refused } from '../support/refused.js';

const create: ChannelCommand = { type: 'CreateChannel', data: { channelId: 'ch1', settings: { name: 'n', family: 'image', baseUrl: '/_sim', models: ['m'] } } };
const update = (changes: Partial<ChannelSettings> = {}): ChannelCommand => ({ type: 'UpdateChannel', data: { channelId: 'ch1', changes } });
const remove: ChannelCommand = { type: 'DeleteChannel', data: { channelId: 'ch1' } };

function run(...commands: ChannelCommand[]): ChannelState {
  let state = initialChannelState();
  for (const c of commands) state = decideChannel(c, state).reduce(evolveChannel, state);
  return state;
}

describe('channel decider', () => {
  it('creates with the defaults for what was not given', () => {
    expect(decideChannel(create, initialChannelState())).toEqual([
      {
        type: 'ChannelCreated',
        data: {
          key: '',
          modelMapping: {},
          groups: [],
          priority: 0,
          weight: 1,
          status: 1,
          name: 'n',
          family: 'image',
          baseUrl: '/_sim',
          models: ['m'],
          channelId: 'ch1',
        },
      },
    ]);
    expect(() => decideChannel(create, run(create))).toThrow(refused('internal', 'channel_exists'));
  });

  it('updates an existing channel, even with no field given', () => {
    expect(decideChannel(update({ weight: 5 }), run(create))).toEqual([{ type: 'ChannelUpdated', data: { changes: { weight: 5 } } }]);
    expect(decideChannel(update(), run(create))).toEqual([{ type: 'ChannelUpdated', data: { changes: {} } }]);
    const state = run(create, update({ weight: 5 }));
    expect(state.status === 'active' && state.settings.weight).toBe(5);
  });

  it('a missing or deleted channel is not found for an update or a delete', () => {
    for (const on of [initialChannelState(), run(create, remove)]) {
      expect(() => decideChannel(update(), on)).toThrow(refused('not_found', 'not_found', 'id'));
      expect(() => decideChannel(remove, on)).toThrow('no channel ch1');
    }
  });

  it('folds what it decided', () => {
    let state = initialChannelState();
    const events: ChannelEvent[] = [];
    for (const c of [create, update({ name: 'x' }), remove]) {
      const decided = decideChannel(c, state);
      events.push(...decided);
      state = decided.reduce(evolveChannel, state);
    }
    expect(fold(channelDecider, events)).toEqual(state);
    expect(state.status).toBe('deleted');
  });
});
