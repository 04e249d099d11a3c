/**
 * Prompt markers steer the simulator: `[sim:fail]`, `[sim:reject]`, `[sim:5xx]`, `[sim:slow]`,
 * `[sim:partial]`, `[sim:4xx-poll]`, case-insensitive, anywhere in the text. Every family reads
 * them the same way; the ones that matter after submit travel inside the task id as flag letters.
 */

export type SimMarkers = Readonly<{
  /** The task ends `failed` at its completion step (sync routes: HTTP 500). */
  fail: boolean;
  /** The submit is refused with HTTP 400 `invalid_request`. */
  reject: boolean;
  /** The submit answers HTTP 503 `upstream_unavailable` (retryable). */
  unavailable: boolean;
  /** The task takes `SLOW_FACTOR` times as many steps. */
  slow: boolean;
  /** Fewer results than asked: max(1, n - 1). */
  partial: boolean;
  /** Polling answers 404: the upstream lost the task. */
  lostOnPoll: boolean;
}>;

export const NO_MARKERS: SimMarkers = {
  fail: false,
  reject: false,
  unavailable: false,
  slow: false,
  partial: false,
  lostOnPoll: false,
};

const MARKER_NAMES: Readonly<Record<string, keyof SimMarkers>> = {
  fail: 'fail',
  reject: 'reject',
  '5xx': 'unavailable',
  slow: 'slow',
  partial: 'partial',
  '4xx-poll': 'lostOnPoll',
};

const MARKER_PATTERN = /\[sim:([a-z0-9-]+)\]/gi;

/** Reads every known `[sim:…]` marker in `text`; unknown markers are ignored. */
export function parseMarkers(text: string | null | undefined): SimMarkers {
  if (!text) return NO_MARKERS;
  const found: Record<keyof SimMarkers, boolean> = { ...NO_MARKERS };
  for (const match of text.matchAll(MARKER_PATTERN)) {
    const key = MARKER_NAMES[(match[1] ?? '').toLowerCase()];
    if (key) found[key] = true;
  }
  return found;
}

/** Markers from several texts (prompt, other text fields, an `x-sim-markers` header) together. */
export function parseMarkersOf(texts: ReadonlyArray<string | null | undefined>): SimMarkers {
  return parseMarkers(texts.filter((t): t is string => typeof t === 'string').join('\n'));
}

/** The text without its markers, for echoing a prompt back (e.g. `revised_prompt`). */
export function stripMarkers(text: string): string {
  return text
    .replace(MARKER_PATTERN, '')
    .replace(/\s{2,}/g, ' ')
    .trim();
}

/** Flag letters for the markers that still matter after submit (reject/5xx never reach a task). */
const FLAG_LETTERS: ReadonlyArray<readonly [keyof SimMarkers, string]> = [
  ['fail', 'f'],
  ['slow', 's'],
  ['partial', 'p'],
  ['lostOnPoll', 'l'],
];

export function markersToFlags(markers: SimMarkers): string {
  return FLAG_LETTERS.filter(([key]) => markers[key])
    .map(([, letter]) => letter)
    .join('');
}

export function markersFromFlags(flags: string): SimMarkers {
  const found: Record<keyof SimMarkers, boolean> = { ...NO_MARKERS };
  for (const [key, letter] of FLAG_LETTERS) found[key] = flags.includes(letter);
  return found;
}

/** How many results a task that was asked for `n` returns. */
export function resultCount(n: number, markers: SimMarkers): number {
  return markers.partial ? Math.max(1, n - 1) : n;
}
