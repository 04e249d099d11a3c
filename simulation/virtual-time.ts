/**
 * Virtual time and seeded randomness for the whole process: the engine's own code runs
 * unchanged, with `setTimeout`, `setInterval`, `setImmediate`, `Date` and `performance` faked
 * by @sinonjs/fake-timers, and `Math.random`, `crypto.randomUUID` and `crypto.randomBytes`
 * drawn from the run's seeded source. Nothing waits for real time: the simulation fires the
 * next due timer, then lets every promise that follows from it settle, and so on.
 *
 * Installed once per process, before the engine is imported (a module that captured a timer
 * function at import would keep the real one).
 */
import crypto from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';
import FakeTimers from '@sinonjs/fake-timers';

type InstalledClock = ReturnType<typeof FakeTimers.install>;
import type { Random } from './random.js';

/** 2026-01-01T00:00:00Z: every run starts at the same virtual instant. */
export const EPOCH_MS = Date.UTC(2026, 0, 1);

// Taken before the fakes go in: the one real wait, used to let microtasks drain between steps.
const realSetImmediate = globalThis.setImmediate;
const drain = () => new Promise<void>((resolve) => realSetImmediate(resolve));

export interface VirtualTime {
  clock: InstalledClock;
  /** Virtual milliseconds since EPOCH_MS. */
  elapsedMs(): number;
  /**
   * Fires the next due timer (advancing virtual time to it) and lets everything it set off
   * settle. False when no timer is left.
   */
  step(): Promise<boolean>;
  /** Lets every settled promise's continuations run without moving time. */
  settle(): Promise<void>;
  /** Steps until `work` settles, and gives its outcome. */
  until<T>(work: Promise<T>): Promise<T>;
}

let installed: InstalledClock | undefined;

/** SIM_PROFILE=1: counts the timers fired by their callback's source, printed at exit (which timers cost the steps). */
const profile = process.env.SIM_PROFILE === '1';
const fired = new Map<string, number>();
function profileNext(clock: InstalledClock): void {
  const timers = [...((clock as unknown as { timers?: Map<number, { callAt: number; id: number; func: unknown }> }).timers?.values() ?? [])];
  let first: (typeof timers)[number] | undefined;
  for (const t of timers) if (!first || t.callAt < first.callAt || (t.callAt === first.callAt && t.id < first.id)) first = t;
  const key = String(first?.func).replace(/\s+/g, ' ').slice(0, 140);
  fired.set(key, (fired.get(key) ?? 0) + 1);
}
if (profile) {
  process.on('exit', () => {
    for (const [k, n] of [...fired].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.error(String(n).padStart(8), k);
  });
}

/**
 * `Date` read from the virtual clock. Not fake-timers' own: it gives each `new Date()` an own
 * `constructor` property, which makes every timestamp the engine takes a slow object (3-5 % of a
 * world's CPU). This one hands out plain native Dates; `instanceof Date` still holds.
 */
function installClockDate(clock: InstalledClock): void {
  const NativeDate = Date;
  function ClockDate(this: unknown, ...args: unknown[]): Date | string {
    if (new.target === undefined) return new NativeDate(clock.now).toString();
    return args.length === 0 ? new NativeDate(clock.now) : new NativeDate(...(args as [number]));
  }
  Object.setPrototypeOf(ClockDate, NativeDate); // Date.UTC, Date.parse
  ClockDate.prototype = NativeDate.prototype;
  ClockDate.now = () => clock.now;
  globalThis.Date = ClockDate as unknown as DateConstructor;
}

export function installVirtualTime(random: () => Random): VirtualTime {
  if (!installed) {
    installed = FakeTimers.install({
      now: EPOCH_MS,
      // performance and hrtime stay real: the engine's logic reads neither, the run's wall time does.
      toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'setImmediate', 'clearImmediate'],
      loopLimit: Number.MAX_SAFE_INTEGER,
    });
    installClockDate(installed);
    // Randomness the engine draws (ids, jitter, channel order) comes from the run's source.
    Math.random = () => random().float();
    crypto.randomUUID = () => {
      const b = random().bytes(16);
      b[6] = (b[6]! & 0x0f) | 0x40;
      b[8] = (b[8]! & 0x3f) | 0x80;
      const h = b.toString('hex');
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
    };
    (crypto as { randomBytes: unknown }).randomBytes = (size: number) => random().bytes(size);
    syncBuiltinESMExports();
  }
  const clock = installed;
  return {
    clock,
    elapsedMs: () => clock.now - EPOCH_MS,
    async step() {
      await drain();
      if (clock.countTimers() === 0) return false;
      if (profile) profileNext(clock);
      clock.next();
      await drain();
      return true;
    },
    settle: drain,
    async until<T>(work: Promise<T>): Promise<T> {
      let settled = false;
      const watched = work.finally(() => (settled = true));
      watched.catch(() => undefined);
      await drain();
      while (!settled) {
        if (clock.countTimers() === 0) throw new Error('virtual time: nothing left to run, and the work has not settled');
        clock.next();
        await drain();
      }
      return watched;
    },
  };
}
