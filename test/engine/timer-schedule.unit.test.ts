/** One timer for many due times (src/engine/dispatch/timer-schedule.ts), and the per-channel slots the poller queues in (channel-slots.ts). */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TimerSchedule, type Schedulable } from '../../src/engine/dispatch/timer-schedule.js';
import { ChannelSlots } from '../../src/engine/channels/channel-slots.js';

interface Item extends Schedulable {
  name: string;
}
const item = (name: string): Item => ({ name, dueAt: 0, heapIndex: -1 });

describe('TimerSchedule', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('tells each item once, at its time, in the order they are due, with one timer armed', () => {
    const fired: string[] = [];
    const schedule = new TimerSchedule<Item>((i) => fired.push(`${i.name}@${Date.now() - start}`));
    const start = Date.now();
    schedule.schedule(item('c'), 300);
    schedule.schedule(item('a'), 100);
    schedule.schedule(item('b'), 200);
    schedule.schedule(item('a2'), 100);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(99);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired.sort()).toEqual(['a2@100', 'a@100']);
    vi.advanceTimersByTime(300);
    expect(fired.slice(2)).toEqual(['b@200', 'c@300']);
    expect(schedule.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('moves an item scheduled again, earlier or later, and forgets a removed one', () => {
    const fired: string[] = [];
    const schedule = new TimerSchedule<Item>((i) => fired.push(i.name));
    const [a, b, c] = [item('a'), item('b'), item('c')];
    schedule.schedule(a, 100);
    schedule.schedule(b, 200);
    schedule.schedule(c, 300);
    schedule.schedule(c, 50);
    schedule.schedule(a, 250);
    schedule.remove(b);
    schedule.remove(b);
    expect(schedule.has(b)).toBe(false);
    expect(schedule.size).toBe(2);
    vi.advanceTimersByTime(1000);
    expect(fired).toEqual(['c', 'a']);
  });

  it('an item scheduled again from its own call waits for the next firing, even at once', () => {
    let calls = 0;
    const schedule = new TimerSchedule<Item>((i) => {
      calls++;
      if (calls < 3) schedule.schedule(i, 0);
    });
    schedule.schedule(item('x'), 10);
    vi.advanceTimersToNextTimer();
    expect(calls).toBe(1);
    vi.advanceTimersToNextTimer();
    expect(calls).toBe(2);
    vi.advanceTimersToNextTimer();
    expect(calls).toBe(3);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('clear forgets everything and disarms its timer', () => {
    const fired: string[] = [];
    const schedule = new TimerSchedule<Item>((i) => fired.push(i.name));
    const a = item('a');
    schedule.schedule(a, 10);
    schedule.schedule(item('b'), 20);
    schedule.clear();
    expect(vi.getTimerCount()).toBe(0);
    expect(schedule.has(a)).toBe(false);
    vi.advanceTimersByTime(100);
    expect(fired).toEqual([]);
  });

  it('keeps the heap order through many random moves and removals', () => {
    const fired: number[] = [];
    const schedule = new TimerSchedule<Item>((i) => fired.push(i.dueAt));
    const items = Array.from({ length: 500 }, (_, n) => item(String(n)));
    let seed = 7;
    const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    for (const i of items) schedule.schedule(i, Math.floor(random() * 10_000));
    for (let n = 0; n < 1000; n++) {
      const i = items[Math.floor(random() * items.length)]!;
      if (random() < 0.2) schedule.remove(i);
      else schedule.schedule(i, Math.floor(random() * 10_000));
    }
    const left = schedule.size;
    vi.advanceTimersByTime(20_000);
    expect(fired).toHaveLength(left);
    expect([...fired].sort((x, y) => x - y)).toEqual(fired);
  });
});

describe('ChannelSlots', () => {
  it('starts up to the limit per channel, queues the rest in order, and starts one per release', () => {
    const started: string[] = [];
    const slots = new ChannelSlots<string>(2, (s) => started.push(s));
    for (const s of ['a1', 'a2', 'a3', 'a4']) slots.enqueue('A', s);
    slots.enqueue('B', 'b1');
    expect(started).toEqual(['a1', 'a2', 'b1']);
    slots.release('A');
    expect(started).toEqual(['a1', 'a2', 'b1', 'a3']);
    expect(slots.remove('A', 'a4')).toBe(true);
    expect(slots.remove('A', 'a4')).toBe(false);
    slots.release('A');
    slots.release('A');
    slots.release('A');
    slots.enqueue('A', 'a5');
    slots.enqueue('A', 'a6');
    slots.enqueue('A', 'a7');
    expect(started).toEqual(['a1', 'a2', 'b1', 'a3', 'a5', 'a6']);
    slots.clearWaiting();
    slots.release('A');
    expect(started).toHaveLength(6);
  });
});
