/**
 * One timer for many due times: items wait in a binary min-heap ordered by when they are due,
 * and a single `setTimeout` is armed for the earliest. At 100,000 tasks in flight a timer per
 * task costs a Timeout object, its closure and a list node each; here an item costs one heap slot.
 *
 * Items carry their own place in the heap (`heapIndex`), so moving or removing one is O(log n)
 * without a side table. Time is `Date.now()`, the clock `setTimeout` follows (and fake timers fake).
 */

/** What the schedule stores on an item: when it is due and where it sits (-1: not scheduled). */
export interface Schedulable {
  dueAt: number;
  heapIndex: number;
}

/** Longest delay `setTimeout` takes (about 24.8 days); a later item is looked at again then. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class TimerSchedule<T extends Schedulable> {
  private readonly heap: T[] = [];
  private timer: NodeJS.Timeout | undefined;
  private armedAt = Number.POSITIVE_INFINITY;

  /** `onDue` is called once per due item, after every item due at that moment left the schedule. */
  constructor(private readonly onDue: (item: T) => void) {}

  get size(): number {
    return this.heap.length;
  }

  has(item: T): boolean {
    return item.heapIndex >= 0 && this.heap[item.heapIndex] === item;
  }

  /** Due `delayMs` from now; an item already scheduled moves to the new time. */
  schedule(item: T, delayMs: number): void {
    this.scheduleAt(item, Date.now() + Math.max(0, delayMs));
  }

  scheduleAt(item: T, dueAt: number): void {
    item.dueAt = dueAt;
    if (!this.has(item)) {
      item.heapIndex = this.heap.length;
      this.heap.push(item);
    }
    // Moved either way: `up` leaves an item due later in place, `down` one due earlier.
    this.up(item.heapIndex);
    this.down(item.heapIndex);
    this.arm();
  }

  /** Not due any more (nothing happens when it was not scheduled). */
  remove(item: T): void {
    if (!this.has(item)) return;
    const index = item.heapIndex;
    const last = this.heap.pop()!;
    item.heapIndex = -1;
    if (last !== item) {
      this.heap[index] = last;
      last.heapIndex = index;
      this.down(index);
      this.up(last.heapIndex);
    }
    // The armed timer may now fire early: it finds nothing due and arms for the new earliest.
    if (this.heap.length === 0) this.disarm();
  }

  clear(): void {
    for (const item of this.heap) item.heapIndex = -1;
    this.heap.length = 0;
    this.disarm();
  }

  private fire(): void {
    this.timer = undefined;
    this.armedAt = Number.POSITIVE_INFINITY;
    const now = Date.now();
    // Taken out first, then told: an item scheduled again from `onDue` (even at once) waits
    // for the next firing instead of looping here.
    const due: T[] = [];
    while (this.heap.length > 0 && this.heap[0]!.dueAt <= now) {
      due.push(this.heap[0]!);
      this.remove(this.heap[0]!);
    }
    this.arm();
    for (const item of due) this.onDue(item);
  }

  private arm(): void {
    const first = this.heap[0];
    if (!first || first.dueAt >= this.armedAt) return;
    this.disarm();
    this.armedAt = first.dueAt;
    this.timer = setTimeout(() => this.fire(), Math.min(MAX_TIMER_MS, Math.max(0, first.dueAt - Date.now())));
  }

  private disarm(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.armedAt = Number.POSITIVE_INFINITY;
  }

  private up(index: number): void {
    const item = this.heap[index]!;
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = this.heap[parentIndex]!;
      if (parent.dueAt <= item.dueAt) break;
      this.heap[index] = parent;
      parent.heapIndex = index;
      index = parentIndex;
    }
    this.heap[index] = item;
    item.heapIndex = index;
  }

  private down(index: number): void {
    const item = this.heap[index]!;
    const n = this.heap.length;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= n) break;
      const right = left + 1;
      const child = right < n && this.heap[right]!.dueAt < this.heap[left]!.dueAt ? right : left;
      const smaller = this.heap[child]!;
      if (smaller.dueAt >= item.dueAt) break;
      this.heap[index] = smaller;
      smaller.heapIndex = index;
      index = child;
    }
    this.heap[index] = item;
    item.heapIndex = index;
  }
}
