/**
 * The channel aggregate (stream `channel-<channelId>`): an upstream an administrator adds,
 * changes and deletes. A deleted channel is treated as missing.
 */
import { assertNever, fold, type Command, type Decider } from './decider.js';
import type { ChannelSettings, DomainEvent, EventOf } from './events.js';

export type ChannelEvent = EventOf<'ChannelCreated' | 'ChannelUpdated' | 'ChannelDeleted'>;

export type ChannelState = Readonly<{ status: 'none' }> | Readonly<{ status: 'active' | 'deleted'; channelId: string; settings: Readonly<ChannelSettings> }>;

/** What a new channel must be given; the rest takes `channelDefaults`. */
export type NewChannelSettings = Pick<ChannelSettings, 'name' | 'family' | 'baseUrl' | 'models'> & Partial<ChannelSettings>;

export const channelDefaults: Readonly<Omit<ChannelSettings, 'name' | 'family' | 'baseUrl' | 'models'>> = {
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

export class ChannelNotFoundError extends Error {
  constructor(readonly channelId: string) {
    super(`no channel ${channelId}`);
    this.name = 'ChannelNotFoundError';
  }
}

/** A new channel's id is already a stream: ids are random, so only a bug gets here. */
export class ChannelExistsError extends Error {
  constructor(readonly channelId: string) {
    super(`channel ${channelId} already exists`);
    this.name = 'ChannelExistsError';
  }
}

export function initialChannelState(): ChannelState {
  return { status: 'none' };
}

export function decideChannel(command: ChannelCommand, state: ChannelState): ChannelEvent[] {
  switch (command.type) {
    case 'CreateChannel': {
      const { channelId, settings } = command.data;
      if (state.status !== 'none') throw new ChannelExistsError(channelId);
      return [{ type: 'ChannelCreated', data: { ...channelDefaults, ...settings, channelId } }];
    }
    case 'UpdateChannel':
      if (state.status !== 'active') throw new ChannelNotFoundError(command.data.channelId);
      return [{ type: 'ChannelUpdated', data: { changes: { ...command.data.changes } } }];
    case 'DeleteChannel':
      if (state.status !== 'active') throw new ChannelNotFoundError(command.data.channelId);
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

export function foldChannel(events: Iterable<DomainEvent>): ChannelState {
  return fold(channelDecider, events);
}

export const channelDecider: Decider<ChannelState, ChannelCommand, ChannelEvent> = {
  decide: decideChannel,
  evolve: evolveChannel,
  initialState: initialChannelState,
};
