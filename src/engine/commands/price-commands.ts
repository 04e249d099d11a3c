/** Changes to the price table (domain/price-table.ts) through the one command handler. */
import { streams } from '../../domain/events.js';
import { priceTableDecider, type ChangePrices } from '../../domain/price-table.js';
import type { EventMetadata, EventStore } from '../../ports/event-store.js';
import { appendedPosition, executeCommand } from './command-handler.js';

/** Applies `change` to the table the stream holds and appends the whole resulting table. */
export async function changePrices(events: EventStore, change: ChangePrices['data'], metadata: EventMetadata): Promise<bigint> {
  return appendedPosition(
    await executeCommand({ events, stream: streams.pricing(), decider: priceTableDecider, command: { type: 'ChangePrices', data: change }, metadata }),
  );
}
