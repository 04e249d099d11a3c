/**
 * For subscription-driven processes: a cheap periodic look at whether anything of theirs is
 * pending. "Nothing after my position" counts as a successful pass, so an idle but current
 * process shows a fresh pass, and one stuck behind pending events does not.
 */
import type { EventStore } from '../../ports/event-store.js';

export function idleCheck(
  events: EventStore,
  streamPrefixes: readonly string[],
  position: () => bigint,
  onCurrent: () => void,
  everyMs = 2000,
): { start(): void; stop(): void } {
  let timer: NodeJS.Timeout | undefined;
  const check = async (): Promise<void> => {
    const [next] = await events.readAll({ after: position(), maxCount: 1, streamPrefixes });
    if (!next) onCurrent();
  };
  return {
    start() {
      void check().catch(() => undefined);
      timer = setInterval(() => void check().catch(() => undefined), everyMs);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
    },
  };
}
