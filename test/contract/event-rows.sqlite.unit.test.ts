/** The SQLite store's rows (arrays, integers as numbers) as the port's recorded events. */
import { expect, it } from 'vitest';
import { toRecordedEvent, type EventRow } from '../../src/adapters/sqlite/event-rows.js';

const row = (position: number): EventRow => [position, 'task-1', 2, 'e1', 'TaskSubmitted', '{"a":1}', '{"at":"2026-11-29T00:00:00.000Z"}'];

it('maps each column, the position as the BigInt the port carries', () => {
  expect(toRecordedEvent(row(42))).toEqual({
    id: 'e1',
    type: 'TaskSubmitted',
    data: { a: 1 },
    metadata: { at: '2026-11-29T00:00:00.000Z' },
    streamName: 'task-1',
    revision: 2,
    position: 42n,
  });
  expect(toRecordedEvent(row(Number.MAX_SAFE_INTEGER)).position).toBe(9007199254740991n);
});

it('refuses a position a number does not hold exactly, instead of a wrong one', () => {
  expect(() => toRecordedEvent(row(2 ** 53 + 2))).toThrow(/beyond what a number holds exactly/);
});
