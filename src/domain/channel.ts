/**
 * The channel aggregate (stream `channel-<channelId>`): an upstream an administrator adds,
 * changes and deletes. A deleted channel is treated as missing.
 */
import { assertNever, type Command, type Decider } from './decider.js';
import type { ChannelSettings, DomainEvent, EventOf } from './events.js';
import { Refusal } from './refusal.js';

export type ChannelEvent = EventOf<'ChannelCreated' | 'ChannelUpdated' | 'ChannelDeleted'>;

export type ChannelState = Readonly<{ status: 'none' }> | Readonly<{ status: 'active' | 'deleted'; channelId: string; settings: Readonly<ChannelSettings> }>;

/** What a new channel must be given; the rest takes `channelDefaults`. */
export type NewChannelSettings = Pick<ChannelSettings, 'name' | 'family' | 'baseUrl' | 'models'> & Partial<ChannelSettings>;

const channelDefaults: Readonly<Omit<ChannelSettings, 'name' | 'family' | 'baseUrl' | 'models'>> = {
  key: '',
  modelMapping: {},
  groups: [],
  priority: 0,
  weight: 1,
  status: 1,
};

export type CreateChannel = Command<'CreateChannel', { channelId: string; settings: NewChannelSettings }>;
/** Appended even when no field is given: the change is the administrator's act (and its time). */
export type UpdateChannel = Command<'UpdateChannel', { channelId: string; changes: Partial<ChannelSettings> }>;
export type DeleteChannel = Command<'DeleteChannel', { channelId: string }>;
export type ChannelCommand = CreateChannel | UpdateChannel | DeleteChannel;

/** A deleted channel is treated as missing. */
const channelNotFound = (channelId: string): Refusal => new Refusal('not_found', 'not_found', `id: no channel ${channelId}`, 'id');

export function initialChannelState(): ChannelState {
  return { status: 'none' };
}

export function decideChannel(command: ChannelCommand, state: ChannelState): ChannelEvent[] {
  switch (command.type) {
    case 'CreateChannel': {
      const { channelId, settings } = command.data;
      // Channel ids are random: only a bug gets here.
      if (state.status !== 'none') throw new Refusal('internal', 'channel_exists', `channel ${channelId} already exists`);
      return [{ type: 'ChannelCreated', data: { ...channelDefaults, ...settings, channelId } }];
    }
    case 'UpdateChannel':
      if (state.status !== 'active') throw channelNotFound(command.data.channelId);
      return [{ type: 'ChannelUpdated', data: { changes: { ...command.data.changes } } }];
    case 'DeleteChannel':
      if (state.status !== 'active') throw channelNotFound(command.data.channelId);
      return [{ type: 'ChannelDeleted', data: { channelId: command.data.channelId } }];
    default:
      return assertNever(command, 'channel command');
  }
}

/** Never throws on a recorded event: events that do not apply (or other streams') are ignored. */
export function evolveChannel(state: ChannelState, event: DomainEvent): ChannelState {
  switch (event.type) {
    case 'ChannelCreated': {
      if (state.status !== 'none') return state;
      const { channelId, ...settings } = event.data;
      return { status: 'active', channelId, settings };
    }
    case 'ChannelUpdated':
      return state.status === 'active' ? { ...state, settings: { ...state.settings, ...event.data.changes } } : state;
    case 'ChannelDeleted':
      return state.status === 'active' ? { ...state, status: 'deleted' } : state;
    default:
      return state;
  }
}

export const channelDecider: Decider<ChannelState, ChannelCommand, ChannelEvent> = {
  decide: decideChannel,
  evolve: evolveChannel,
  initialState: initialChannelState,
};
