import type { ChannelSettings } from '../src/domain/events.js';
import type { Projection } from './projection.js';
import { VIEWS } from './views.js';

export interface ChannelDoc extends ChannelSettings {
  channelId: string;
  createdAt: string;
  updatedAt: string;
}

export const channelsProjection: Projection<ChannelDoc> = {
  name: 'channels',
  view: VIEWS.channels,
  handles: ['ChannelCreated', 'ChannelUpdated', 'ChannelDeleted'],
  documentId: (e) => e.streamName.slice('channel-'.length),
  evolve(doc, e) {
    switch (e.type) {
      case 'ChannelCreated':
        return doc ? undefined : { ...e.data, createdAt: e.metadata.at, updatedAt: e.metadata.at };
      case 'ChannelUpdated':
        return doc ? { ...doc, ...e.data.changes, updatedAt: e.metadata.at } : undefined;
      case 'ChannelDeleted':
        return doc ? null : undefined;
      default:
        return undefined;
    }
  },
};
