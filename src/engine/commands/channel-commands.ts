/** Channel commands (domain/channel.ts) through the one command handler. */
import { channelDecider, type ChannelCommand, type NewChannelSettings } from '../../domain/channel.js';
import { streams, type ChannelSettings } from '../../domain/events.js';
import { newId } from '../../domain/ids.js';
import type { EventMetadata, EventStore } from '../../ports/event-store.js';
import { appendedPosition, executeCommand } from './command-handler.js';

async function execute(events: EventStore, channelId: string, command: ChannelCommand, metadata: EventMetadata): Promise<bigint> {
  return appendedPosition(await executeCommand({ events, stream: streams.channel(channelId), decider: channelDecider, command, metadata }));
}

export async function createChannel(
  events: EventStore,
  settings: NewChannelSettings,
  metadata: EventMetadata,
): Promise<{ channelId: string; position: bigint }> {
  const channelId = newId('ch', 12);
  return { channelId, position: await execute(events, channelId, { type: 'CreateChannel', data: { channelId, settings } }, metadata) };
}

export async function updateChannel(events: EventStore, channelId: string, changes: Partial<ChannelSettings>, metadata: EventMetadata): Promise<bigint> {
  return execute(events, channelId, { type: 'UpdateChannel', data: { channelId, changes } }, metadata);
}

export async function deleteChannel(events: EventStore, channelId: string, metadata: EventMetadata): Promise<bigint> {
  return execute(events, channelId, { type: 'DeleteChannel', data: { channelId } }, metadata);
}
