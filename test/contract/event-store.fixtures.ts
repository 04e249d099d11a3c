/**
 * Helpers shared by the EventStore contract suites. Names are unique per test so the suites
 * can also run against a long-lived shared server.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, expect } from 'vitest';
import {
  WrongExpectedRevisionError,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type RecordedEvent,
  type Subscription,
} from '../../src/ports/event-store.js';

export type EventStoreFactory = () => Promise<{ store: EventStore; cleanup(): Promise<void> }>;

/** Opens a fresh store before each test and cleans it up after; returns an accessor. */
export function useEventStore(factory: EventStoreFactory): () => EventStore {
  let current: { store: EventStore; cleanup(): Promise<void> } | undefined;
  beforeEach(async () => {
    current = await factory();
  });
  afterEach(async () => {
    await current?.cleanup();
    current = undefined;
  });
  return () => {
    if (!current) throw new Error('event store used outside a test');
    return current.store;
  };
}

/** A stream prefix no other test uses, e.g. `t1a2b3c4d-`. */
export function uniquePrefix(): string {
  return `t${randomUUID().replaceAll('-', '').slice(0, 12)}-`;
}

export function uniqueStream(label = 'stream'): string {
  return `${uniquePrefix()}${label}`;
}

export function newEvent(type = 'Tested', data: unknown = {}, id: string = randomUUID()): NewEvent {
  return { id, type, data, metadata: { at: '2024-05-01T12:00:00.000Z', correlationId: 'corr-1' } };
}

export function newEvents(count: number, type = 'Tested'): NewEvent[] {
  return Array.from({ length: count }, (_, index) => newEvent(type, { index }));
}

export async function expectWrongRevision(
  attempt: Promise<unknown>,
  expected: { streamName: string; expected: ExpectedRevision; actual: number },
): Promise<void> {
  const error: unknown = await attempt.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(WrongExpectedRevisionError);
  if (!(error instanceof WrongExpectedRevisionError)) return;
  expect({ streamName: error.streamName, expected: error.expected, actual: error.actual }).toEqual(expected);
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Pulls batches until `count` events arrived (fails after `timeoutMs`). Keeps batch sizes. */
export async function pullEvents(
  iterator: AsyncIterator<RecordedEvent[]>,
  count: number,
  timeoutMs = 5000,
): Promise<{ events: RecordedEvent[]; batchSizes: number[] }> {
  const events: RecordedEvent[] = [];
  const batchSizes: number[] = [];
  const deadline = Date.now() + timeoutMs;
  while (events.length < count) {
    const remaining = deadline - Date.now();
    const result = await Promise.race([iterator.next(), sleep(Math.max(0, remaining)).then(() => 'timeout' as const)]);
    if (result === 'timeout') throw new Error(`only ${events.length} of ${count} events arrived within ${timeoutMs} ms`);
    if (result.done) throw new Error(`subscription ended after ${events.length} of ${count} events`);
    batchSizes.push(result.value.length);
    events.push(...result.value);
  }
  return { events, batchSizes };
}

/**
 * Proves nothing more arrives: starts a next(), waits `quietMs`, closes the subscription and
 * expects that pending next() to end the iteration rather than deliver a batch.
 */
export async function expectNothingMore(subscription: Subscription, iterator: AsyncIterator<RecordedEvent[]>, quietMs = 400): Promise<void> {
  const pending = iterator.next();
  await sleep(quietMs);
  await subscription.close();
  const result = await pending;
  expect(result.done ? [] : result.value.map((event) => `${event.streamName}@${event.revision}`)).toEqual([]);
  expect(result.done).toBe(true);
}

export const ids = (events: readonly { id: string }[]): string[] => events.map((event) => event.id);
