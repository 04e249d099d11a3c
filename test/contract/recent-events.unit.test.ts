/**
 * The SQLite store's run of recently committed events (src/adapters/sqlite/recent-events.ts):
 * it answers only a range it holds whole, so an answer from it is what SQLite would answer.
 */
import { describe, expect, it } from 'vitest';
import { createRecentEvents } from '../../src/adapters/sqlite/recent-events.js';
import type { RecordedEvent } from '../../src/ports/event-store.js';

const event = (position: number, streamName = 'task-t1'): RecordedEvent => ({
  id: `e${position}`,
  type: 'TaskProgressed',
  data: { status: 'in_progress', progress: position, nested: { list: [1] } },
  metadata: { at: 'now' },
  streamName,
  revision: position,
  position: BigInt(position),
});
const positions = (events: RecordedEvent[] | undefined) => events?.map((e) => Number(e.position));

describe('recent events', () => {
  it('answers a range inside its run, by prefix and limit; a range reaching past either end is left to SQLite', () => {
    const recent = createRecentEvents(100);
    recent.add([event(5), event(6, 'account-a'), event(7)]);
    recent.add([event(8)]);
    expect(positions(recent.read(4n, 8n, -1, []))).toEqual([5, 6, 7, 8]);
    expect(positions(recent.read(5n, 8n, -1, ['task-']))).toEqual([7, 8]);
    expect(positions(recent.read(4n, 8n, 2, ['task-']))).toEqual([5, 7]);
    expect(positions(recent.read(6n, 7n, -1, []))).toEqual([7]);
    expect(positions(recent.read(8n, 8n, -1, []))).toEqual([]);
    expect(recent.read(3n, 8n, -1, [])).toBeUndefined(); // position 4 is not held
    expect(recent.read(4n, 9n, -1, [])).toBeUndefined(); // 9 was committed by someone else
  });

  it('a gap (another process committed in between) starts a new run; the oldest go past the capacity', () => {
    const recent = createRecentEvents(3);
    recent.add([event(1), event(2)]);
    recent.add([event(4)]);
    expect(recent.read(1n, 4n, -1, [])).toBeUndefined();
    expect(positions(recent.read(3n, 4n, -1, []))).toEqual([4]);
    recent.add([event(5), event(6), event(7)]);
    expect(recent.read(3n, 7n, -1, [])).toBeUndefined();
    expect(positions(recent.read(4n, 7n, -1, []))).toEqual([5, 6, 7]);
  });

  it('the events are shared by every reader, so none can change them', () => {
    const recent = createRecentEvents(10);
    recent.add([event(1)]);
    const [read] = recent.read(0n, 1n, -1, [])!;
    const data = read!.data as { progress: number; nested: { list: number[] } };
    expect(() => (data.progress = 2)).toThrow(TypeError);
    expect(() => data.nested.list.push(2)).toThrow(TypeError);
    expect(() => ((read!.metadata as Record<string, unknown>).at = 'later')).toThrow(TypeError);
  });
});
