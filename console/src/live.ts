/**
 * Live updates: one EventSource on `/api/events/stream` (the session cookie goes with it) for the
 * whole page. Events carry their type as the SSE event name, so each type is listened to by name;
 * the browser reconnects by itself and resumes with Last-Event-ID. Views subscribe through the
 * context and refetch what an event touched.
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

export interface LiveEvents {
  subscribe: (listener: Listener) => () => void;
}

/** Opens the stream; `onState` hears whether it is connected. Returns the feed and its closer. */
export function openLiveEvents(onState: (state: LiveState) => void): { feed: LiveEvents; close: () => void } {
  const listeners = new Set<Listener>();
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
      for (const listener of listeners) listener(event);
    });
  }
  source.onopen = () => onState('live');
  source.onerror = () => onState(source.readyState === EventSource.CLOSED ? 'offline' : 'reconnecting');
  return {
    feed: {
      subscribe(listener) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    },
    close: () => source.close(),
  };
}

const none: LiveEvents = { subscribe: () => () => undefined };
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
