/**
 * Live updates: one EventSource on `/api/events/stream` (the session cookie goes with it) for the
 * whole page. Events carry their type as the SSE event name, so each type is listened to by name;
 * the browser reconnects by itself and resumes with Last-Event-ID. Views subscribe through the
 * context and refetch what an event touched.
 *
 * The feed also keeps the arrival times of the last minute's events, for a rate: the stream starts
 * "now" when it opens (it can start at a position, not at a time), so what it saw is complete only
 * from its first opening on — `openedAt` says since when; a reconnect resumes where it left off.
 */
import { createContext } from 'preact';
import { useContext, useEffect, useRef } from 'preact/hooks';
import type { LiveEvent } from './types';

export type LiveState = 'connecting' | 'live' | 'reconnecting' | 'offline';

/** Every event type of docs/events.md the console reacts to. */
const EVENT_TYPES = [
  'TaskSubmitted',
  'TaskProgressed',
  'TaskSucceeded',
  'TaskFailed',
  'AssetsExpired',
  'UpstreamSubmitted',
  'CallbackScheduled',
  'CallbackAttempted',
  'CallbackDelivered',
  'CallbackDeadLettered',
  'QuotaCredited',
  'QuotaReserved',
  'QuotaSettled',
  'QuotaReleased',
  'QuotaDebited',
] as const;

export type Listener = (event: LiveEvent) => void;

/** How long the feed keeps the arrival of events: a minute. */
export const RECENT_MS = 60_000;

export interface LiveEvents {
  subscribe: (listener: Listener) => () => void;
  /** When the stream first opened (the page's clock, ms); undefined before. */
  openedAt: () => number | undefined;
  /** The events that arrived in the last minute (at most): when, and of which type. */
  recent: () => readonly { at: number; type: string }[];
}

/** Opens the stream; `onState` hears whether it is connected. Returns the feed and its closer. */
export function openLiveEvents(onState: (state: LiveState) => void): { feed: LiveEvents; close: () => void } {
  const listeners = new Set<Listener>();
  let openedAt: number | undefined;
  let recent: { at: number; type: string }[] = [];
  const trim = () => {
    const since = Date.now() - RECENT_MS;
    if (recent.length > 0 && recent[0]!.at < since) recent = recent.filter((e) => e.at >= since);
  };
  const source = new EventSource('/api/events/stream');
  onState('connecting');
  for (const type of EVENT_TYPES) {
    source.addEventListener(type, (message: MessageEvent<string>) => {
      let event: LiveEvent;
      try {
        event = JSON.parse(message.data) as LiveEvent;
      } catch {
        return;
      }
      recent.push({ at: Date.now(), type: event.type });
      trim();
      for (const listener of listeners) listener(event);
    });
  }
  source.onopen = () => {
    openedAt ??= Date.now();
    onState('live');
  };
  source.onerror = () => onState(source.readyState === EventSource.CLOSED ? 'offline' : 'reconnecting');
  return {
    feed: {
      subscribe(listener) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
      openedAt: () => openedAt,
      recent() {
        trim();
        return recent;
      },
    },
    close: () => source.close(),
  };
}

const none: LiveEvents = { subscribe: () => () => undefined, openedAt: () => undefined, recent: () => [] };

/** The page's live feed. */
export const useLiveFeed = (): LiveEvents => useContext(LiveContext);
export const LiveContext = createContext<LiveEvents>(none);

/** Calls `listener` for every live event while the component is mounted (the latest closure). */
export function useLiveEvents(listener: Listener): void {
  const feed = useContext(LiveContext);
  const latest = useRef(listener);
  latest.current = listener;
  useEffect(() => feed.subscribe((event) => latest.current(event)), [feed]);
}

/**
 * A function that runs `action` shortly after the last of a burst of calls, and once more a
 * second later: the views the APIs read are folded from the same events the stream carries and
 * may trail it by a moment, so the first read can still miss what the event announced.
 */
export function useDebounced(action: () => void, delayMs = 250): () => void {
  const timers = useRef<ReturnType<typeof setTimeout>[]>([]);
  const latest = useRef(action);
  latest.current = action;
  const clear = () => timers.current.forEach((t) => clearTimeout(t));
  useEffect(() => clear, []);
  return useRef(() => {
    clear();
    timers.current = [delayMs, delayMs + 1000].map((ms) => setTimeout(() => latest.current(), ms));
  }).current;
}
