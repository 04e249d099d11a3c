/**
 * The price table (stream `pricing`): each PricesSet carries the whole table in force, so a
 * change is decided against the table the stream holds — two administrators changing
 * different models at once both take effect, neither undoes the other.
 */
import { assertNever, type Command, type Decider } from './decider.js';
import type { DomainEvent, EventOf, ModelPrice, PriceTable } from './events.js';

export type PriceTableEvent = EventOf<'PricesSet'>;

/** A change to the table: a price or ratio to set, or `null` to remove it; the rest stays. */
export type ChangePrices = Command<
  'ChangePrices',
  { models: Readonly<Record<string, ModelPrice | null>>; groupRatios: Readonly<Record<string, number | null>> }
>;
export type PriceTableCommand = ChangePrices;

export function initialPriceTable(): PriceTable {
  return { models: {}, groupRatios: {} };
}

/** Appended even when nothing changes: setting prices is the administrator's act. */
export function decidePriceTable(command: PriceTableCommand, table: PriceTable): PriceTableEvent[] {
  switch (command.type) {
    case 'ChangePrices':
      return [
        { type: 'PricesSet', data: { models: patched(table.models, command.data.models), groupRatios: patched(table.groupRatios, command.data.groupRatios) } },
      ];
    default:
      return assertNever(command.type, 'price table command');
  }
}

function patched<T>(current: Readonly<Record<string, T>>, changes: Readonly<Record<string, T | null>>): Record<string, T> {
  const next = { ...current };
  for (const [key, value] of Object.entries(changes)) {
    if (value === null) delete next[key];
    else next[key] = value;
  }
  return next;
}

export function evolvePriceTable(table: PriceTable, event: DomainEvent): PriceTable {
  return event.type === 'PricesSet' ? event.data : table;
}

/** Each PricesSet replaces the table, so only the last one counts. */
export const priceTableDecider: Decider<PriceTable, PriceTableCommand, PriceTableEvent> = {
  decide: decidePriceTable,
  evolve: evolvePriceTable,
  initialState: initialPriceTable,
};
